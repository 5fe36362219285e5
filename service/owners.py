"""Who owns what a visitor makes: a training job, its data, its task and its model.

An owner is a hash of a secret only the visitor holds (a key its browser keeps, an API client's session, or the
name a Hugging Face sign-in vouches for); only the hash is ever stored. What has no owner (PUBLIC: the bundled
models, the ones the operator trains from the command line) is everybody's; the rest is its owner's alone.
"""

import hashlib

PUBLIC = ""
NOBODY = "nobody"  # who a request without a usable identity acts for: it sees the public models and owns nothing
KEY, HF_USER = "key", "hf"  # the kinds of secret: a random key (or a session id), a signed-in Hugging Face user


def owner_id(kind: str, secret: str) -> str:
    """The stored form of an owner: the kind keeps a user named like someone's key from being that key."""
    return hashlib.sha256(f"sentence-lab\0{kind}\0{secret}".encode()).hexdigest()[:32]


def visible(owner: str, viewer: str) -> bool:
    return owner == PUBLIC or owner == viewer
