"""Two accounts on one labelling: the invitation's rules, the invitee's own labels and what
they may see, their agreement against sklearn's, and everyone else's 404."""

from __future__ import annotations

import re

import pytest
from sklearn.metrics import cohen_kappa_score

from evaluations.charts import number
from labelling import agreement, cases, services
from labelling.models import Invitation, Label
from submissions.models import Dataset
from tests.labelling.conftest import url

pytestmark = pytest.mark.django_db


def _label(labelling, person, values, note=""):
    for position, value in enumerate(values):
        if value is not None:
            case = cases.case_at(labelling, position)
            services.label_save(labelling, person, case, value=str(value), note=note)


@pytest.mark.parametrize(
    ("username", "message"),
    [
        ("nobody", "There is no account named nobody."),
        ("alice", "You label this yourself: invite another account."),
        ("carol", "carol is invited already."),
    ],
)
def test_an_invitation_names_another_existing_account_once(owner_client, shared, username, message):
    response = owner_client.post(url(shared, "invite/"), {"username": username})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert Invitation.objects.count() == 1


def test_the_owner_invites_an_account_by_its_username(owner_client, labelling, invitee):
    response = owner_client.post(url(labelling, "invite/"), {"username": "carol"}, follow=True)
    assert Invitation.objects.get().invitee == invitee
    assert "carol can now label these cases." in response.content.decode()


def test_the_invitee_labels_with_labels_of_their_own_and_sees_the_owners_only_after(
    client, owner, invitee, shared
):
    _label(shared, owner, [0], note="owner thinks wrong")
    client.force_login(invitee)
    before = client.get(url(shared, "cases/1/")).content.decode()
    assert "What is 2+2?" in before
    assert "owner thinks wrong" not in before and "alice’s label" not in before
    # Nothing of the owner's but the case: no invite, no version, no evaluation.
    assert 'id="invite"' not in before and 'id="save-version"' not in before
    assert "shared with you by alice" in before
    client.post(url(shared, "cases/1/label/"), {"value": "1", "note": "looks right"})
    after = client.get(url(shared, "cases/1/")).content.decode()
    assert "alice’s label" in after and "owner thinks wrong" in after
    labels = {label.labeller.username: label.value for label in Label.objects.all()}
    assert labels == {"alice": 0.0, "carol": 1.0}


def test_the_owner_sees_the_invitees_label_once_they_labelled_the_row_too(
    owner_client, owner, invitee, shared
):
    _label(shared, invitee, [1, 1], note="carol's note")
    page = owner_client.get(url(shared, "cases/2/")).content.decode()
    assert "carol’s label" not in page and "carol's note" not in page
    owner_client.post(url(shared, "cases/2/label/"), {"value": "0"})
    page = owner_client.get(url(shared, "cases/2/")).content.decode()
    assert "carol’s label" in page and "carol&#x27;s note" in page


def test_an_invitee_cannot_invite_or_make_a_version_or_reach_the_owners_other_pages(
    client, invitee, shared, dataset, evaluation
):
    client.force_login(invitee)
    assert client.post(url(shared, "invite/"), {"username": "bob"}).status_code == 404
    assert client.post(url(shared, "version/")).status_code == 404
    assert Dataset.objects.count() == 1 and Invitation.objects.count() == 1
    assert client.get(f"/en/datasets/{dataset.pk}/delete/").status_code == 404
    assert client.get(f"/en/evaluations/{evaluation.pk}/").status_code == 404
    assert client.get(f"/en/labellings/new/dataset/{dataset.pk}/").status_code == 404
    assert client.get(f"/en/labellings/new/evaluation/{evaluation.pk}/").status_code == 404


LABELLING_URLS = [
    ("get", ""),
    ("get", "cases/1/"),
    ("post", "cases/1/label/"),
    ("post", "invite/"),
    ("post", "version/"),
]


@pytest.mark.parametrize(("method", "tail"), LABELLING_URLS)
def test_every_labelling_url_is_404_to_an_outsider(client, outsider, shared, method, tail):
    client.force_login(outsider)
    data = {"value": "1", "username": "bob"} if method == "post" else None
    response = getattr(client, method)(url(shared, tail), data, HTTP_HX_REQUEST="true")
    assert response.status_code == 404
    assert not Label.objects.exists() and Invitation.objects.count() == 1
    assert Dataset.objects.count() == 1


def test_two_people_agreement_is_cohens_kappa_over_the_rows_both_labelled(
    client, owner, invitee, shared
):
    alice = [1, 1, 0, 1, 0]
    carol = [1, 0, 0, 1, None]
    _label(shared, owner, alice)
    _label(shared, invitee, carol)
    expected = cohen_kappa_score(alice[:4], carol[:4])
    figures = agreement.between(shared, owner.pk, invitee.pk)
    assert figures["n"] == 4
    assert figures["kappa"]["value"] == pytest.approx(expected)
    assert figures["kappa"]["low"] <= figures["kappa"]["value"] <= figures["kappa"]["high"]
    assert figures["agreement"]["value"] == pytest.approx(0.75)
    for person, other in ((owner, "carol"), (invitee, "alice")):
        client.force_login(person)
        page = client.get(url(shared))
        rows = page.context["agreement"]
        assert [row["other"] for row in rows] == [other]
        assert rows[0]["kappa_value"] == pytest.approx(expected)
        body = page.content.decode()
        shown = re.search(r'data-kappa="([^"]+)"', body).group(1)
        assert float(shown) == pytest.approx(expected)
        assert number(expected, 2) in page.context["agreement"][0]["kappa"]
        assert "75%" in body


def test_on_a_scale_the_page_shows_the_quadratic_weighted_kappa_too(
    client, owner, invitee, dataset
):
    labelling = services.labelling_create(
        owner=owner, dataset=dataset, kind="scale", scale=5, input_columns=["question"]
    )
    services.invitation_create(labelling, invitee)
    alice, carol = [5, 4, 1, 3, 2], [4, 4, 2, 3, 1]
    _label(labelling, owner, alice)
    _label(labelling, invitee, carol)
    figures = agreement.between(labelling, owner.pk, invitee.pk)
    assert figures["kappa"]["value"] == pytest.approx(cohen_kappa_score(alice, carol))
    weighted = cohen_kappa_score(alice, carol, weights="quadratic", labels=[1, 2, 3, 4, 5])
    assert figures["weighted_kappa"]["value"] == pytest.approx(weighted)
    client.force_login(owner)
    body = client.get(url(labelling)).content.decode()
    assert "Quadratic-weighted kappa" in body


def test_without_a_shared_row_there_is_no_agreement_yet(owner_client, owner, invitee, shared):
    _label(shared, owner, [1, None, None])
    _label(shared, invitee, [None, 0])
    assert agreement.between(shared, owner.pk, invitee.pk) is None
    page = owner_client.get(url(shared)).content.decode()
    assert "Once you and another person have labelled the same rows" in page
