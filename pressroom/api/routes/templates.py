"""The brand templates a tenant may use, with their identity: what a client may put in a job's
``template`` field (under the template policy: ``PRESSROOM_TEMPLATE_POLICY``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from starlette.concurrency import run_in_threadpool

from pressroom.api.deps import IntakeDep, Tenant
from pressroom.api.openapi import json_body, problems
from pressroom.errors import PressroomError
from pressroom.intake import Intake
from pressroom.templates import builtin_names, load_template, template_folders
from pressroom.web.single import known_query

router = APIRouter(tags=["templates"], dependencies=[Depends(known_query)])


def _listing(intake: Intake, tenant: str) -> dict[str, Any]:
    allowed = intake.allowed_templates(tenant)
    builtin = builtin_names()
    items: list[dict[str, Any]] = []
    for name, folder in template_folders(intake.settings.template_dirs).items():
        if allowed is not None and name not in allowed:
            continue
        try:
            template = load_template(folder)
        except PressroomError as exc:  # listed, so its owner sees why jobs naming it fail
            items.append({"name": name, "usable": False, "code": exc.code})
            continue
        items.append(
            {
                "name": name,
                "usable": True,
                "identity": template.identity,
                "version": template.version,
                "content_hash": template.content_hash,
                "builtin": name in builtin,
                "cover": template.cover is not None,
                "output_type": template.output_type,
                "sidecar": template.sidecar,
                "languages": "+".join(template.languages) or None,
            }
        )
    return {"templates": items}


@router.get(
    "/v1/templates",
    response_model=None,
    responses={
        **json_body("TemplateList", "The templates this tenant may name in a job."),
        **problems(401, 503),
    },
)
async def list_templates(who: Tenant, intake: IntakeDep) -> dict[str, Any]:
    """Every template this key's tenant may use: its allow-list, or, without one, every
    template (policy `open`) or the built-in ones once any tenant has a list (policy
    `builtin`, the default). A template that cannot be used as written is listed with its
    code (`BAD_TEMPLATE`)."""
    return await run_in_threadpool(_listing, intake, who)
