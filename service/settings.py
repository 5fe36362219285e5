"""Every setting of the Space and its tools, in one typed object read once from the environment.

    settings = Settings.at_start()      # app.py, at start (a bad value: one line, and the process ends)
    settings.train_max_rows             # 20000, or $LAB_TRAIN_MAX_ROWS
    Settings(train_max_rows=50)         # a test's own, whatever the environment says

Each field is the variable LAB_<FIELD> (an alias names another: SPACE_ID, RAY_ADDRESS), with its type, default and
one line of description; an empty variable counts as unset. A value that does not fit is refused at load in one
line naming the variable (SettingsError). The components take the object, or the values they need from it, from
whoever loaded it: nothing below reads LAB_* variables itself. docs/space.md's settings table is generated from
these fields (`make settings-table` writes it; tests/unit/test_settings.py keeps the two the same).
The library (core/) reads none of them: it takes plain arguments; its own two variables, DATA_DIR and
LAB_CACHE_DIR (core.data), are documented beside the table.
"""

import argparse
import sys
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.answers import CAPACITY as ANSWER_CAPACITY
from core.data import PROJECT_ROOT

TABLE_BEGIN, TABLE_END = "<!-- settings table: make settings-table -->", "<!-- end of settings table -->"

Count = Annotated[int, Field(ge=0)]
Positive = Annotated[int, Field(ge=1)]
Amount = Annotated[float, Field(ge=0)]


class SettingsError(ValueError):
    """A variable that does not fit its field, in one line."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LAB_", env_ignore_empty=True, extra="ignore", frozen=True)

    # where things are
    checkpoints: Path | None = Field(
        None,
        description="the checkpoint folder the app serves (`<task>/<model>/`); unset: the pinned Hub repo, "
        "else `checkpoints/`",
    )
    user_models: Path = Field(
        PROJECT_ROOT / "user_models",
        description="where trained-by-you jobs and models live (on a Space: `/data/user_models`)",
    )
    # the Train tab's caps and queues (service.jobs.TrainLimits)
    train_max_bytes: Positive = Field(5 * 2**20, description="the largest training file, in bytes")
    train_max_rows: Positive = Field(20_000, description="the most rows a training file may have")
    train_max_epochs: Positive = Field(20, description="the most epochs a job may ask for")
    train_max_minutes: Amount = Field(15.0, description="the most minutes a job may ask for")
    train_max_jobs_per_owner: Positive = Field(2, description="jobs one visitor may have waiting or running at once")
    train_max_jobs_per_client: Positive = Field(
        4, description="anonymous jobs from one network address waiting or running at once"
    )
    train_max_signed_in_jobs_per_client: Positive = Field(
        8,
        description="signed-in users' jobs from one network address waiting or running at once (a class behind "
        "one address signs in separately)",
    )
    train_max_active_jobs: Positive = Field(10, description="jobs in the whole Space waiting or running at once")
    # a public Space (service.budgets.SpacePolicy)
    space_id: str = Field(
        "", validation_alias="SPACE_ID", description="set by Hugging Face on a Space: the defaults below change"
    )
    # Hugging Face's OAuth, set by Hugging Face on a Space with `hf_oauth: true` (all of them: real_oauth)
    system: str = Field("", validation_alias="SYSTEM", description="`spaces` on a Hugging Face Space")
    oauth_client_id: str = Field("", validation_alias="OAUTH_CLIENT_ID", description="the Space's OAuth app")
    oauth_client_secret: SecretStr = Field(
        SecretStr(""), validation_alias="OAUTH_CLIENT_SECRET", description="the Space's OAuth app's secret"
    )
    oauth_scopes: str = Field("", validation_alias="OAUTH_SCOPES", description="what the sign-in may read")
    openid_provider_url: str = Field(
        "", validation_alias="OPENID_PROVIDER_URL", description="where visitors sign in (`https://huggingface.co`)"
    )
    sign_in: Literal["required", "optional"] | None = Field(
        None,
        description="whether training, own probe cases and file attributions need a Hugging Face sign-in; "
        "unset: `required` on a Space, else `optional`; required without Hugging Face's OAuth: nobody may",
    )
    forwarded_hops: Count | None = Field(
        None,
        description="proxies in front of the app that append the client's address to `X-Forwarded-For`; "
        "unset: 1 on a Space, else 0",
    )
    upload_cache_mb: Amount = Field(512.0, description="Gradio's upload cache for all visitors together, in MB")
    uploads_per_minute: Positive = Field(20, description="uploads per client address a minute")
    binds_per_minute: Positive = Field(
        30, description="`/owner` key bindings per client address a minute (a page load binds in memory only)"
    )
    store_rows_per_client: Positive = Field(
        2000,
        description="owner bindings one client address keeps in the owner store (`owners.sqlite`) and in memory; "
        "past it, that address's least recently used goes",
    )
    store_max_rows: Positive = Field(
        100_000,
        description="owner bindings in the store in all; past it, the ones idle for 30 days go, then new ones are "
        "refused (one line: the store is full)",
    )
    # the user-models folder (service.cleanup.CleanupLimits)
    models_per_owner: Positive = Field(
        6, description="finished jobs (with their models) one owner keeps; past it, that owner's oldest goes"
    )
    user_models_max_mb: Amount = Field(
        2048.0,
        description="disk for trained jobs and models; past it new jobs are refused (nobody's model is removed "
        "to make room)",
    )
    user_models_ttl_hours: Amount = Field(48.0, description="how long a finished job and its model are kept")
    failed_jobs_ttl_minutes: Amount = Field(60.0, description="how long a cancelled, failed or stopped job is kept")
    # the app's memory and queues (demo/)
    # ~0.3-0.5 MB each: 200 sessions hold at most ~100 MB, several times what a class of thirty keeps open (a class
    # run measured 1.18x RSS growth at 500 and 1.12x at 50: docs/performance.md)
    sessions: Positive = Field(
        200,
        description="Gradio sessions kept (pages and API clients, least recently used dropped first; "
        "`web/sessions.py`); who a session acts for is kept apart (`web/owners.py`), which drops nothing live",
    )
    answer_cache: Count = Field(
        ANSWER_CAPACITY,
        description="recent answers kept to answer an identical request again (texts of up to 40 words, keyed "
        "by the checkpoint's owner and file hashes too: `core/answers.py`); 0: none",
    )
    user_models_in_memory: Positive = Field(
        8, description="trained models held in memory, most recently used (in the app, and as many in its worker)"
    )
    model_concurrency: Positive = Field(
        16,
        description="places for requests being answered; with `LAB_QUEUE_SIZE`, the pool that fair shares divide "
        "between clients, in Gradio's queue and the REST pool each (docs/space.md#fair-shares)",
    )
    queue_size: Positive = Field(
        128,
        description="places for waiting requests beyond `LAB_MODEL_CONCURRENCY`; twice the most a hall of 300 was "
        "measured to queue (performance.md); also the most probe and export events waiting in Gradio's queue",
    )
    queue_poll_ms: Annotated[float, Field(gt=0)] = Field(
        10.0,
        description="how often Gradio's idle queue looks for a new event; its own 1 ms cost the idle app 3.5-3.9% "
        "of a core, 10 ms 1.3% (performance.md)",
    )
    direct_rest: bool = Field(
        True, description="REST `/predict` and `/compare` calls answered beside Gradio's queue (a session named or not)"
    )
    serve_backend: Literal["local", "ray"] = Field(
        "local", description="where the model worker runs: the app's own process, or a Ray Serve deployment"
    )
    serve_replicas: Positive = Field(4, description="the most Ray Serve replicas of the model worker (autoscaled)")
    upload_cache_minutes: Amount = Field(60.0, description="how long Gradio keeps an uploaded file")
    export_seconds: Amount = Field(
        60.0,
        description="the model worker's time one *Attributions of a file* export may take; the lines past it "
        "are left out, and said to be",
    )
    # training on a Ray cluster (web/training_ray.py, service.remote; cluster.md)
    train_backend: Literal["local", "ray"] = Field(
        "local", description="where the Train tab's jobs run: one local worker at a time, or a Ray cluster"
    )
    ray_address: str = Field(
        "",
        validation_alias=AliasChoices("LAB_RAY_ADDRESS", "RAY_ADDRESS"),
        description="the cluster's head, host:port (`LAB_RAY_ADDRESS`, else `RAY_ADDRESS`)",
    )
    ray_max_jobs: Positive = Field(8, description="jobs on the cluster at once")
    train_fallback: Literal["local"] | None = Field(
        None, description="`local`: a job whose cluster is out of reach trains here instead of failing"
    )
    # tools (tools/research/oracle)
    oracle_dir: Path | None = Field(None, description="a checkout of the tensor CNN authors' code (`make oracle`)")
    oracle_linker: str = Field("cvm", description="the pytensor linker the authors' code runs with")
    dcnn_oracle_dir: Path | None = Field(None, description="a checkout of the DCNN code of Godin (`make oracle-dcnn`)")
    lasagne_dir: Path | None = Field(None, description="a checkout of Lasagne, which that DCNN code imports")

    @field_validator("sign_in", mode="before")
    @classmethod
    def _lower(cls, value):
        return value.strip().lower() if isinstance(value, str) else value

    @classmethod
    def load(cls, **given) -> "Settings":
        """The environment's settings (`given` over them); SettingsError, one line, for a value that does not fit."""
        try:
            return cls(**given)
        except ValidationError as err:
            raise SettingsError(one_line(err)) from None

    @classmethod
    def at_start(cls) -> "Settings":
        """load() for a process's start (app.py, a worker): a value that does not fit ends it with its one line."""
        try:
            return cls.load()
        except SettingsError as err:
            raise SystemExit(f"error: {err}") from None

    @property
    def on_space(self) -> bool:
        return bool(self.space_id)

    @property
    def requires_sign_in(self) -> bool:
        return self.sign_in == "required" if self.sign_in else self.on_space

    @property
    def real_oauth(self) -> bool:
        """Hugging Face's own sign-in is there: on a Space with `hf_oauth: true`. Elsewhere (a self-hosted copy, a
        Docker run of the Space) Gradio would mock it and sign every visitor in as HF_TOKEN's owner."""
        oauth = (self.oauth_client_id, self.oauth_client_secret.get_secret_value(), self.oauth_scopes)
        return self.on_space and self.system == "spaces" and all(oauth) and bool(self.openid_provider_url)

    @property
    def hops(self) -> int:
        return self.forwarded_hops if self.forwarded_hops is not None else int(self.on_space)


DEFAULTS = Settings.model_construct()  # every field's default, nothing read from the environment


def variables(name: str) -> list[str]:
    """The environment variables of field `name`: LAB_<NAME>, or its aliases."""
    alias = Settings.model_fields[name].validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    return [alias] if isinstance(alias, str) else [f"LAB_{name.upper()}"]


def one_line(err: ValidationError) -> str:
    """`LAB_SIGN_IN='maybe': Input should be 'required' or 'optional'; ...`"""
    parts = []
    for error in err.errors():
        name = str(error["loc"][0]) if error["loc"] else ""
        where = variables(name)[0] if name in Settings.model_fields else name
        parts.append(f"{where}={error.get('input')!r}: {error['msg']}")
    return "; ".join(parts)


def _default(name: str) -> str:
    value = Settings.model_fields[name].default
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if value is None or value == "":
        return "unset"
    if isinstance(value, Path):
        return f"`{value.relative_to(PROJECT_ROOT)}/`" if value.is_relative_to(PROJECT_ROOT) else f"`{value}`"
    if isinstance(value, float):
        return f"`{value:g}`"
    return f"`{value:,}`" if isinstance(value, int) else f"`{value}`"


def table() -> str:
    """docs/space.md's settings table: one row per field, in the order above."""
    rows = ["| variable | default | what it changes |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        names = ", ".join(f"`{v}`" for v in variables(name))
        rows.append(f"| {names} | {_default(name)} | {field.description} |")
    return "\n".join(rows)


def with_table(doc: str) -> str:
    """`doc` with the text between TABLE_BEGIN and TABLE_END replaced by table()."""
    head, found, rest = doc.partition(TABLE_BEGIN)
    if not found or TABLE_END not in rest:
        raise ValueError(f"no {TABLE_BEGIN} ... {TABLE_END} in the document")
    return f"{head}{TABLE_BEGIN}\n{table()}\n{TABLE_END}{rest.partition(TABLE_END)[2]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service.settings", description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", action="store_true", help="print docs/space.md's settings table")
    parser.add_argument("--write", type=Path, default=None, metavar="DOC", help="replace DOC's table with it")
    args = parser.parse_args(argv)
    if args.table:
        print(table())
        return 0
    if args.write:
        args.write.write_text(with_table(args.write.read_text(encoding="utf-8")), encoding="utf-8")
        return 0
    try:
        settings = Settings.load()
    except SettingsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for name in Settings.model_fields:
        print(f"{variables(name)[0]}={getattr(settings, name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
