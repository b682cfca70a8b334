"""The routes a file's bytes take between this machine and a pod, each moving one file into a hidden part file
on the far end: sftp.py (direct SSH, podtui's own client), openssh.py (direct SSH, OpenSSH's `ssh`), runpodctl.py
(runpodctl send/receive through RunPod's relay) and console.py (chunked base64 through the pod's shell, the one
route the gateway always allows). Which one a transfer takes is decided in files.py; the routes never import one
another."""
