"""SSH to pods: RunPod's PTY-only gateway and direct SSH, sessions, and run_remote."""
