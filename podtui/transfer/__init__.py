"""Transfers: files pushed to and pulled from pods, and Hugging Face downloads run on pods, each verified on both
ends before it counts as done, queued, retried and remembered across restarts.

What lives where:
- sync/: `podtui sync` (docs/sync.md): folders kept in step, its own layers in its package docstring.
- queue.py: the transfer queue (concurrency, cancel, retry, "then terminate the pod", other podtuis' jobs).
- history.py: transfers.json, shared by every podtui running at once; owner.py: which podtui a job belongs to.
- job.py: one transfer as data; progress.py: what a running transfer reports, and the cancel switch.
- runner.py: the interface every kind of transfer implements (TransferRunner), what a runner is given
  (TransferContext), TransferFailed, and reaching a pod over SSH. runners.py: the runner for a job's direction.
- push.py, pull.py: the file runners, and files.py, what they share; hf_download.py: the Hub -> pod download.
- routes/: how a file's bytes travel: sftp.py, openssh.py, runpodctl.py, console.py (one file each way, into a
  part file).
- what the routes and runners build on: archive.py (folders as tar), manifest.py (what a folder holds),
  source.py (what a source is), checksum.py, part.py (part file names), modes.py (file modes),
  leftovers.py (runpodctl processes to clean up), runpodctl_output.py (runpodctl's output parsed).

Dependency rule: a module imports only modules on lines below its own; modules on one line never import each
other (no cycles, and the routes and runners stay independent of one another).

    sync (its modules import what is below; nothing here imports them)
    queue
    history
    runners
    push | pull | hf_download
    files
    runner | manifest
    routes (routes.sftp | routes.openssh | routes.runpodctl | routes.console)
    progress | archive | owner
    job
    checksum | part | modes | leftovers | source | runpodctl_output
"""
