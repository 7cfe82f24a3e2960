"""Where the interface language comes from: the URL, then the user's saved choice, then
the browser's Accept-Language; and a switcher that keeps the current page."""

from __future__ import annotations

import pytest

from metrics import services as metric_services
from skynet_web.models import Profile

pytestmark = pytest.mark.django_db


def test_the_url_prefix_decides_the_language(client):
    body = client.get("/es/accounts/login/").content.decode()
    assert '<html lang="es">' in body
    assert "Iniciar sesión" in body


def test_accept_language_picks_the_language_of_an_unprefixed_url(client):
    response = client.get("/", HTTP_ACCEPT_LANGUAGE="hi,en;q=0.5")
    assert response.status_code == 302
    assert response["Location"] == "/hi/"


def test_a_saved_choice_beats_accept_language(client, owner):
    Profile.objects.create(user=owner, language="es")
    client.force_login(owner)
    response = client.get("/", HTTP_ACCEPT_LANGUAGE="hi")
    assert response["Location"] == "/es/"


def test_the_url_beats_a_saved_choice(client, owner):
    Profile.objects.create(user=owner, language="es")
    client.force_login(owner)
    assert '<html lang="hi">' in client.get("/hi/").content.decode()


def test_switching_keeps_the_page_and_saves_the_choice(owner_client, owner):
    metric = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    response = owner_client.post(
        "/language/", {"language": "hi", "next": f"/en/metrics/{metric.pk}/?check=3#check"}
    )
    assert response.status_code == 302
    assert response["Location"] == f"/hi/metrics/{metric.pk}/?check=3#check"
    assert Profile.objects.get(user=owner).language == "hi"
    assert response.cookies["django_language"].value == "hi"


def test_switching_works_when_the_page_is_not_in_the_saved_language(owner_client, owner):
    # A shared /hi/ link opened by a user who chose Spanish: the switcher is posted where
    # the saved choice (Spanish) is active, and must still read the Hindi path.
    Profile.objects.create(user=owner, language="es")
    metric = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    response = owner_client.post(
        "/language/", {"language": "en", "next": f"/hi/metrics/{metric.pk}/"}
    )
    assert response["Location"] == f"/en/metrics/{metric.pk}/"
    assert Profile.objects.get(user=owner).language == "en"
    response = owner_client.post("/language/", {"language": "hi", "next": "/en/submit/"})
    assert response["Location"] == "/hi/submit/"


def test_a_shared_link_keeps_its_language_for_a_reader_who_chose_another(owner_client, owner):
    Profile.objects.create(user=owner, language="es")
    metric = metric_services.metric_create(owner=owner, name="labels", starter="exact_match")
    body = owner_client.get(f"/en/metrics/{metric.pk}/").content.decode()
    assert '<html lang="en">' in body
    assert Profile.objects.get(user=owner).language == "es"


def test_switching_on_a_page_that_does_not_exist_still_changes_its_prefix(client):
    response = client.post("/language/", {"language": "es", "next": "/hi/no/such/page/"})
    assert response["Location"] == "/es/no/such/page/"


def test_switching_on_a_docs_page_lands_on_the_same_docs_page(client):
    response = client.post(
        "/language/", {"language": "es", "next": "/docs/en/concepts/engines#auto"}
    )
    assert response["Location"] == "/docs/es/concepts/engines#auto"


def test_switching_refuses_to_leave_the_site(client):
    response = client.post(
        "/language/", {"language": "es", "next": "https://elsewhere.example/phish"}
    )
    assert response["Location"] == "/es/"


def test_every_page_offers_the_switcher(client):
    body = client.get("/en/accounts/login/").content.decode()
    assert 'action="/language/"' in body
    for code, name in (("en", "English"), ("es", "español"), ("hi", "हिंदी")):
        assert f'value="{code}" lang="{code}"' in body
        assert name in body
