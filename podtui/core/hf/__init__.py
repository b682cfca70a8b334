"""Hugging Face access before any pod time is spent: which token, does it work, can it read the repo (a gated
repo's two failures told apart), what the repo holds and how long it takes to fetch. No textual here."""
