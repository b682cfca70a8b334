"""Why a gated repo refused: the license not accepted, or a token without the "public gated repositories" scope.

The rule people go by reads the status: 401 means the license was not accepted, 403 means the scope is missing.
The real Hub is subtler, so the message it sends in `X-Error-Message` comes first (huggingface_hub raises
GatedRepoError when `X-Error-Code: GatedRepo`; docs/runpod-facts.md#hugging-face-gated-repos):
  "... Please enable access to public gated repositories in your fine-grained token settings ..."  -> scope (403)
  "... you are not in the authorized list. Visit https://huggingface.co/REPO to ask for access."  -> license (403,
      a logged-in user who has not accepted it; e.g. huggingface/diffusers#4447, kubeai-project/kubeai#155)
  "... You must have access to it and be authenticated to access it. Please log in."  -> no token reached the Hub
      when none was sent (401; e.g. ToTheBeginning/PuLID#97); with a valid token, the status rule's license case
  "Your request to access ... is awaiting a review ..." / "... has been rejected ..." -> a manual gate's answer
Then whoami-v2's `auth.accessToken.fineGrained.canReadGatedRepos` (false on a fine-grained token without the
scope), then the status rule.
"""

from __future__ import annotations

from typing import Literal

Access = Literal["ok", "login", "license", "pending", "rejected", "scope", "unknown"]
SETTINGS_URL = "https://huggingface.co/settings/tokens"


def classify(status: int | None, message: str | None, *, has_token: bool, can_read_gated: bool | None = None) -> Access:
    """has_token: a token the Hub accepted was sent. can_read_gated: from whoami (None: not a fine-grained token,
    or unknown)."""
    text = (message or "").lower()
    if "fine-grained" in text or "public gated repositories" in text:
        return "scope"
    if "awaiting a review" in text:
        return "pending"
    if "rejected" in text:
        return "rejected"
    if "authorized list" in text or "ask for access" in text:
        return "license"
    if not has_token:
        return "login"
    if can_read_gated is False:
        return "scope"
    if status == 403:
        return "scope"  # the status rule: 403 is the token's scope
    if status == 401:
        return "license"  # the status rule: 401 with a good token is the license
    return "unknown"


def remedy(access: Access, repo_page: str, user: str | None = None) -> tuple[str, str, str | None]:
    """(what is wrong, what to do, the link) for a refusal, in plain words."""
    who = f" as {user}" if user else ""
    if access == "license":
        return (
            "the license is not accepted",
            f'open {repo_page} signed in{who} and click "Agree and access repository" (some repos also ask '
            "the authors to approve you)",
            repo_page,
        )
    if access == "pending":
        return (
            "your access request is waiting for the repo authors' review",
            f"wait for the approval e-mail; the request is on {repo_page}",
            repo_page,
        )
    if access == "rejected":
        return ("the repo authors rejected your access request", f"see {repo_page}", repo_page)
    if access == "scope":
        return (
            "the token may not read public gated repos",
            f'at {SETTINGS_URL} edit this fine-grained token and tick "Read access to contents of all public '
            'gated repos you can access" (or make a classic read token)',
            SETTINGS_URL,
        )
    if access == "login":
        return (
            "a gated repo needs a token",
            f"make a read token at {SETTINGS_URL}, then `hf auth login` or set HF_TOKEN",
            SETTINGS_URL,
        )
    return ("the Hub refused access", f"check the repo page {repo_page} and the token at {SETTINGS_URL}", repo_page)
