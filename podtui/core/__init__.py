"""The domain core: RunPod API, pods, config and secrets. Never imports textual (a test enforces it)."""
