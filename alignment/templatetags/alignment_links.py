"""The two places other apps' pages offer an alignment: the evaluation's "Does the metric
agree with people?" section (the link to the start page, when its judge can be aligned)
and a finished run's page (Accept, when the run is an alignment's).

Inclusion tags, so that the evaluations and runs apps, below this one, name nothing of
it but the tag; their views stay as they are. Each answers for the page's own evaluation
or run, which its view already got for its owner: the tag never widens what is shown."""

from __future__ import annotations

from django import template

from alignment import plans, selectors, services

register = template.Library()


@register.inclusion_tag("alignment/_link.html")
def alignment_link(evaluation) -> dict:
    """The start page's link, when the evaluation's judge can be aligned."""
    return {"evaluation": evaluation, "show": plans.refusal(evaluation) is None}


@register.inclusion_tag("alignment/_accept.html")
def alignment_accept(run) -> dict:
    """Accept, for a finished run of an alignment with a best prompt to save; once
    accepted, the link to the comparison."""
    alignment = selectors.alignment_of_run(run)
    if alignment is None:
        return {"alignment": None}
    return {
        "alignment": alignment,
        "run": run,
        "metric_name": alignment.seed_version.metric.name,
        "can_accept": alignment.accepted_at is None and services.best_text(run) is not None,
    }
