"""POST /api/remedies/apply and /api/remedies/undo: the panel's "Apply fix" and "Undo" (issue 13).

Admin only (the panel's own check), and state-changing, so OriginGuard refuses them from a foreign origin; a
body must be JSON (application/json), which a cross-site form cannot send without the browser asking first.
The answer is the RemedyResult once the engine was restarted and verified (or not); a refusal is a 4xx with
one sentence in `detail`, in the reader's language (the panel's choice: CHAT_LANGUAGE, else Accept-Language).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TypeVar

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from chainlit_app import i18n
from chainlit_app.i18n import localize, t
from chainlit_app.panel import admin_only
from chainlit_app.remedy_desk import RemedyRefused
from chainlit_app.runtime import Runtime

APPLY_PATH = "/api/remedies/apply"
UNDO_PATH = "/api/remedies/undo"
ID = r"^[A-Za-z0-9_.-]{1,64}$"
Body = TypeVar("Body", bound=BaseModel)


class ApplyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    remedy: str = Field(pattern=ID)
    finding: str | None = Field(default=None, pattern=ID, description="the finding's id, as the panel lists it")
    kind: str | None = Field(default=None, pattern=ID, description="or its kind: the newest open one of it")
    confirm: bool = False

    @model_validator(mode="after")
    def _names_a_finding(self) -> ApplyRequest:
        if not self.finding and not self.kind:
            raise ValueError("name the finding: \"finding\" (its id) or \"kind\"")
        return self


class UndoRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    remedy: str = Field(pattern=ID)


async def _body(request: Request, model: type[Body], example: str) -> Body:
    """The JSON body as `model`, or a 4xx that says what a good one looks like."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise HTTPException(status_code=415, detail=t("remedy_api.json_only", example=example))
    try:
        data = json.loads(await request.body() or b"null")
    except ValueError as exc:  # not JSON, or not UTF-8
        raise HTTPException(status_code=400, detail=t("remedy_api.not_json", error=exc, example=example)) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors())
        raise HTTPException(status_code=400, detail=t("remedy_api.not_understood", problems=problems,
                                                      example=example)) from None


def _refused(exc: RemedyRefused) -> JSONResponse:
    """The sentence in `detail`, as FastAPI's own errors; an unsafe remedy adds its `risk`."""
    extra = {key: localize(value) for key, value in exc.extra.items()}
    return JSONResponse({"detail": localize(exc.message), **extra}, status_code=exc.status)


def _language(request: Request, runtime: Runtime) -> i18n.Language:
    """As the panel's API: `?lang=`, else CHAT_LANGUAGE, else the browser's Accept-Language."""
    return i18n.for_request(request.query_params.get("lang"), runtime.settings.chat.language,
                            request.headers.get("accept-language"))


def remedy_router(runtime_getter: Callable[[], Runtime]) -> APIRouter:
    router = APIRouter(dependencies=[Depends(admin_only)])

    @router.post(APPLY_PATH)
    async def apply(request: Request) -> JSONResponse:
        runtime = runtime_getter()
        i18n.set_language(_language(request, runtime))  # this request's task only (a context variable)
        body = await _body(request, ApplyRequest, '{"finding": "<id>", "remedy": "fit_max_model_len"}')
        try:
            result = await runtime.remedies.apply(body.remedy, finding_id=body.finding, kind=body.kind,
                                                  confirm=body.confirm)
        except RemedyRefused as exc:
            return _refused(exc)
        return JSONResponse(result.to_json())

    @router.post(UNDO_PATH)
    async def undo(request: Request) -> JSONResponse:
        runtime = runtime_getter()
        i18n.set_language(_language(request, runtime))
        body = await _body(request, UndoRequest, '{"remedy": "fit_max_model_len"}')
        try:
            result = await runtime.remedies.undo(body.remedy)
        except RemedyRefused as exc:
            return _refused(exc)
        return JSONResponse(result.to_json())

    return router
