"""Publishing a finished training job: its checkpoint with a model card, uploaded to a Hub model repo.
Fails at once, with a JobError, when the Hub is off (HF_HUB_OFFLINE) or the request is incomplete."""

import shutil
import tempfile
from pathlib import Path

from huggingface_hub import EvalResult, HfApi, ModelCardData

from core.checkpoints.hub import describe_hub_error, hub_offline
from core.checkpoints.manifest import check_repo_id
from service.jobs import JobError, job_dir, read_job


def model_card(job: dict) -> str:
    """A Hub model card for a trained job: what it is, its data and its measured test metrics."""
    m = job["metrics"]
    data = ModelCardData(
        language=[job["lang"]],
        library_name="pytorch",
        pipeline_tag="text-classification",
        tags=["sentence-classification", job["model"], "sentence-lab"],
        model_name=f"{job['model']}-{job['task']}",
        eval_results=[
            EvalResult(
                task_type="text-classification",
                dataset_type="user",
                dataset_name=job["file"],
                metric_type="accuracy",
                metric_name="test accuracy",
                metric_value=round(m["test_accuracy"], 4),
            )
        ],
    )
    rows = "\n".join(
        f"| {label} | {v['precision']:.3f} | {v['recall']:.3f} | {v['f1']:.3f} | {v['support']} |"
        for label, v in m["per_class"].items()
    )
    return (
        f"---\n{data.to_yaml()}\n---\n\n# {job['model']} on {job['file']}\n\n"
        f"A `{job['model']}` sentence classifier trained with the sentence-model lab on `{job['file']}` "
        f"(text column `{job['text_column']}`, label column `{job['label_column']}`, {job['rows']} rows, "
        f"language `{job['lang']}`), {m['epochs_run']} epochs, best dev accuracy at epoch {m['best_epoch']}.\n\n"
        f"**Test accuracy: {m['test_accuracy']:.4f}** on {m['test_examples']} held-out rows "
        f"(dev {m['dev_accuracy']:.4f}).\n\n"
        "| label | precision | recall | F1 | support |\n|---|---|---|---|---|\n"
        f"{rows}\n\n"
        f"Load it with `core.models.model_class('{job['model']}').from_pretrained(repo_id)`.\n"
    )


def push_job(
    job_id: str, repo_id: str, token: str | None, root: str | Path | None = None, owner: str | None = None
) -> str:
    """Upload a finished job's checkpoint with its card to a Hub model repo; the commit URL. Fails at once,
    with a JobError, when the Hub is off (HF_HUB_OFFLINE), the request is incomplete or, with an `owner`,
    the job is another owner's (an unknown job)."""
    job = read_job(job_dir(job_id, root, owner))
    if job["status"] != "done":
        raise JobError("not_done", job=job_id, status=job["status"])
    if not token:
        raise JobError("no_token")
    try:
        check_repo_id(repo_id)
    except ValueError:
        raise JobError("bad_repo", repo=str(repo_id)[:100]) from None
    if hub_offline():
        raise JobError("hub_offline")
    api = HfApi(token=token)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "model"
        shutil.copytree(job["checkpoint"], folder)
        (folder / "README.md").write_text(model_card(job), encoding="utf-8")
        try:
            api.create_repo(repo_id, repo_type="model", exist_ok=True)
            commit = api.upload_folder(
                folder_path=str(folder),
                repo_id=repo_id,
                repo_type="model",
                commit_message=f"{job['model']} trained on {job['file']} (sentence-model lab)",
            )
        except Exception as err:  # HTTP, auth, network: one line, never the token
            raise JobError("hub_failed", error=describe_hub_error(err).replace(token, "***")) from None
    return commit.commit_url
