"""`podtui sync`: a local folder and a pod's folder kept in step, every copied file verified by sha256 on both ends
(docs/sync.md).

What lives where, each line importing only lines below it (modules on one line never import each other):

    watch                                     --watch: sync again when local files change
    run                                       SyncRun: one sync, from the listings to the result
    rsync_route | sftp_route | console_route  how the bytes travel
    pod_end | local_end | state               each end's listing, hashes and changes; events, results, SyncState
    remote_scan | plan                        the pod's folder listed in one command; what to do
    pod_batch | scan                          lists and answers through a pod's shell; the local folder listed
    ignore | ops | route                      .gitignore and --exclude; the changes as data; what a route hands back
    tree                                      a listing as data

Names are `str` paths relative to the synced folder, with `/` between parts; a byte that is not UTF-8 is carried
by surrogateescape, as os.fsdecode does, so both ends' names compare equal.
"""
