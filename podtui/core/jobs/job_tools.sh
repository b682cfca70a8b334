# What podtui runs on a pod to start, list, read and cancel jobs (docs/jobs.md#reading-jobs-back), POSIX sh. podtui
# sends it with each command, after the line that sets J (the jobs' folder), in a subshell; a call follows it.
# Every line it prints for podtui starts with @ or a record's name; what others wrote travels base64-encoded.

pj_now() { date +%s; }

# pj_put DIR NAME TEXT: a record file, replaced whole
pj_put() { printf '%s\n' "$3" >"$1/$2.new" && mv -f "$1/$2.new" "$1/$2"; }

# pj_proc PID: sets pj_state and pj_start (clock ticks since boot) of process PID; fails when there is none
pj_proc() {
  [ -r "/proc/$1/stat" ] || return 1
  pj_s=''
  IFS= read -r pj_s <"/proc/$1/stat" 2>/dev/null
  [ -n "$pj_s" ] || return 1
  pj_s=${pj_s##*) }
  # shellcheck disable=SC2086 # the fields, split on purpose
  set -- $pj_s
  pj_state=$1 pj_start=${20}
}

pj_digits() {
  case $1 in '' | *[!0-9]*) return 1 ;; esac
}

# pj_size FILE: its size in bytes (nothing when it is gone)
pj_size() {
  pj_z=$(wc -c <"$1" 2>/dev/null)
  pj_z=${pj_z#"${pj_z%%[!	 ]*}"}
  pj_digits "$pj_z" && printf '%s' "$pj_z"
}

# pj_first FILE: sets pj_v to its first line (empty when it is not there), no process started
pj_first() {
  pj_v=''
  if [ -f "$1" ]; then IFS= read -r pj_v <"$1" 2>/dev/null; fi
  return 0
}

# pj_marked ID: a process carrying the job's PODTUI_JOB_ID is alive (the runner gives it to the command, and it is
# inherited by whatever the command starts, in its process group or not)
pj_marked() { grep -q -s -z -x -F "PODTUI_JOB_ID=$1" /proc/[0-9]*/environ 2>/dev/null; }

# pj_signal_marked ID SIGNAL: the signal to every process carrying the job's PODTUI_JOB_ID
pj_signal_marked() {
  # shellcheck disable=SC2013 # grep names files of /proc: words without blanks
  for pj_m in $(grep -l -s -z -x -F "PODTUI_JOB_ID=$1" /proc/[0-9]*/environ 2>/dev/null); do
    pj_m=${pj_m#/proc/}
    kill "-$2" "${pj_m%/environ}" 2>/dev/null
  done
}

# pj_runner_alive DIR: the job's runner is the process its record names (pid and start time)
pj_runner_alive() {
  pj_p='' pj_t=''
  [ -f "$1/runner" ] && read -r pj_p pj_t <"$1/runner"
  pj_digits "$pj_p" && pj_proc "$pj_p" && [ "$pj_state" != Z ] && [ "$pj_start" = "$pj_t" ]
}

# pj_restarted DIR: the pod's container started after the job did (its pid 1 is younger than the job's start), so
# nothing of the job can be alive: every process of it ended with the container before, and pids are given again
pj_restarted() {
  pj_first "$1/started"
  pj_digits "$pj_v" && pj_proc 1 || return 1
  pj_bt=''
  while read -r pj_k pj_b _; do
    if [ "$pj_k" = btime ]; then pj_bt=$pj_b; fi
  done </proc/stat
  pj_digits "$pj_bt" && [ $((pj_bt + pj_start / 100)) -gt $((pj_v + 2)) ]
}

# pj_group_alive DIR: something of the job's process group is alive and is the job's: its leader by its start time,
# or, the leader gone (its children live on), the pod not restarted since the job started. A group id alone is no
# proof: once the pod restarts, pids are given again, and a daemon's double fork leaves groups without their leader
# (docs/jobs.md#states). Sets pj_g to the group's id.
pj_group_alive() {
  pj_g='' pj_t=''
  [ -f "$1/pgid" ] && read -r pj_g pj_t <"$1/pgid"
  pj_digits "$pj_g" && [ "$pj_g" -gt 1 ] || return 1
  kill -0 -"$pj_g" 2>/dev/null || return 1
  if pj_proc "$pj_g"; then [ "$pj_start" = "$pj_t" ]; else ! pj_restarted "$1"; fi
}

# pj_files PATH...: (paths under $J: each job's spec.json and log folder) "@spec ID SIZE SENT" for each spec.json,
# "@log ID LAST SIZE COUNT BYTES" for each job's chunks (the last one's number and size, how many there are, their
# bytes), then "@specs " and every spec.json sent (SENT 1: at most 512 KiB, readable), in that order, as one base64
# line: three processes in all, whatever the number of jobs. ls -R names each folder it lists ("ID/log:"); of each
# file, the size (its 5th column, in bytes whatever the user's LS_BLOCK_SIZE) and the name (its last: the date takes
# two or three columns, as TIME_STYLE has it) are read.
pj_files() {
  # shellcheck disable=SC2012 # names podtui made (ids, spec.json, c.NNNNNNNN): ls's columns are safe to read
  LC_ALL=C LS_BLOCK_SIZE=1 BLOCK_SIZE=1 QUOTING_STYLE=literal ls -lnLR -- "$@" 2>/dev/null | {
    pj_small='' pj_cur='' pj_last='' pj_lz=0 pj_n=0 pj_sum=0
    while read -r pj_m _ _ _ pj_z pj_p; do
      pj_p=${pj_p##* }
      case $pj_m in
        *:)
          [ "$pj_n" -eq 0 ] || echo "@log $pj_cur $pj_last $pj_lz $pj_n $pj_sum"
          pj_cur='' pj_n=0 pj_sum=0
          case $pj_m in */log:) pj_cur=${pj_m%/log:} ;; esac
          continue
          ;;
        -*) ;;
        *) continue ;;
      esac
      pj_digits "$pj_z" || continue
      case $pj_p in
        */spec.json)
          if [ "$pj_z" -le 524288 ] && [ -r "$pj_p" ]; then
            echo "@spec ${pj_p%%/*} $pj_z 1"
            pj_small="$pj_small $pj_p"
          else
            echo "@spec ${pj_p%%/*} $pj_z 0"
          fi
          ;;
        c.*)
          if [ -n "$pj_cur" ] && pj_digits "${pj_p#c.}"; then
            pj_last=${pj_p#c.} pj_lz=$pj_z pj_n=$((pj_n + 1)) pj_sum=$((pj_sum + pj_z))
          fi
          ;;
      esac
    done
    [ "$pj_n" -eq 0 ] || echo "@log $pj_cur $pj_last $pj_lz $pj_n $pj_sum"
    printf '@specs '
    # shellcheck disable=SC2086 # job ids and file names: words without blanks
    [ -z "$pj_small" ] || cat -- $pj_small | base64 | tr -d '\n'
    echo
  }
}

# pj_list [ID]: every job's record (or one job's): a header, a block for each, then their files (pj_files). What is
# alive is read first: a runner that ends meanwhile has written its end before, so a job that ends while it is
# listed reads as running or ended, never lost.
pj_list() (
  echo "@now $(pj_now) ${RUNPOD_POD_ID:-}"
  cd "$J" 2>/dev/null || exit 0
  pj_want=${1:-*}
  set --
  for pj_d in $pj_want/; do
    [ -d "$pj_d" ] || continue
    pj_name=${pj_d%/}
    case $pj_name in
      *[!a-z0-9-]*)
        printf '@other %s\n' "$(printf '%s' "$pj_name" | base64 | tr -d '\n')"
        continue
        ;;
    esac
    echo "@job $pj_name"
    pj_a=0 pj_b=0
    pj_runner_alive "$pj_name" && pj_a=1
    [ "$pj_a" = 1 ] || ! pj_group_alive "$pj_name" || pj_b=1
    echo "alive $pj_a $pj_b"
    for pj_r in created runner started pgid beat end cancel settings note; do
      if [ -f "$pj_name/$pj_r" ]; then
        pj_first "$pj_name/$pj_r"
        printf '%s %s\n' "$pj_r" "$pj_v"
      fi
    done
    [ -f "$pj_name/spec.json" ] && set -- "$@" "$pj_name/spec.json"
    [ -d "$pj_name/log" ] && set -- "$@" "$pj_name/log"
  done
  [ "$#" -eq 0 ] || pj_files "$@"
)

# pj_ids PREFIX: the ids of the jobs that start with PREFIX
pj_ids() {
  [ -d "$J" ] || return 0
  for pj_d in "$J/$1"*/; do
    [ -d "$pj_d" ] || continue
    pj_d=${pj_d%/}
    echo "@id ${pj_d##*/}"
  done
}

# pj_check: what the runner needs that the pod lacks
pj_check() {
  pj_m=''
  for pj_c in setsid nohup split mkfifo base64 head tail date; do
    command -v "$pj_c" >/dev/null 2>&1 || pj_m="$pj_m $pj_c"
  done
  echo "@missing$pj_m"
  [ -z "$pj_m" ]
}

# pj_new ID: the job's folder, made now (it fails when the id is taken, or when it cannot be written: then nothing
# is left of it, "@dropped")
pj_new() {
  if ! mkdir -p "$J"; then
    echo "@dropped"
    return 1
  fi
  if ! mkdir -m 700 "$J/$1" 2>/dev/null; then
    if [ -d "$J/$1" ]; then echo "@taken"; else mkdir -m 700 "$J/$1" || echo "@dropped"; fi
    return 1
  fi
  pj_put "$J/$1" created "$(pj_now)" || pj_drop "$1"
}

# pj_drop ID: a job's folder that could not be made whole (the volume is full, or read-only), removed; it fails
pj_drop() {
  rm -rf "${J:?}/$1"
  echo "@dropped"
  return 1
}

# pj_write ID NAME BASE64: a file of the job, its bytes decoded from what printf (a builtin) hands base64
pj_write() {
  printf '%s' "$3" | base64 -d >"$J/$1/$2.new" && mv -f "$J/$1/$2.new" "$J/$1/$2"
}

# pj_launch ID: the runner, detached from this shell; then wait until it started the command, and a second more
pj_launch() {
  pj_d=$J/$1
  (cd / && setsid nohup sh "$pj_d/runner.sh" "$pj_d" </dev/null >>"$pj_d/runner.log" 2>&1 &)
  pj_i=0
  while [ ! -f "$pj_d/pgid" ] && [ ! -f "$pj_d/end" ] && [ "$pj_i" -lt 200 ]; do
    sleep 0.1 2>/dev/null || sleep 1
    pj_i=$((pj_i + 1))
  done
  pj_i=0
  while [ ! -f "$pj_d/end" ] && [ "$pj_i" -lt 10 ]; do
    sleep 0.1 2>/dev/null || sleep 1
    pj_i=$((pj_i + 1))
  done
}

# pj_chunk DIR N: the path of the job's log chunk N
pj_chunk() { printf '%s/log/c.%08d' "$1" "$2"; }

# pj_read ID OFFSET MAX: "@at START TOTAL ENDED CHUNK" (START past OFFSET when the cap dropped what was there, or a
# chunk the full volume cut short; ENDED 1 when the job has ended, lost included), then for each chunk read
# "@c N SKIP TAKE" and TAKE bytes of it from SKIP, base64 on one line: at most MAX bytes in all. podtui checks each
# chunk's bytes arrived whole: one deleted while it was read (the cap at work) is read again, or found dropped.
pj_read() {
  pj_d=$J/$1
  if [ ! -d "$pj_d" ]; then
    echo "@none"
    return 0
  fi
  pj_c=''
  [ -f "$pj_d/settings" ] && read -r pj_c _ <"$pj_d/settings"
  if ! pj_digits "$pj_c" || [ "$pj_c" -eq 0 ]; then
    echo "@unreadable"
    return 0
  fi
  # ended: its end is recorded, or nothing of it is alive (a lost job's log grows no more); the end is looked at
  # again after what is alive, as a runner writes its end before it exits
  pj_e=0
  if [ -f "$pj_d/end" ]; then
    pj_e=1
  elif pj_runner_alive "$pj_d" || pj_group_alive "$pj_d"; then
    pj_e=0
  elif [ -f "$pj_d/end" ] || [ -f "$pj_d/runner" ]; then
    pj_e=1
  else
    pj_first "$pj_d/created"
    if pj_digits "$pj_v" && [ $(($(pj_now) - pj_v)) -ge 30 ]; then pj_e=1; fi
  fi
  pj_last=-1
  for pj_f in "$pj_d"/log/c.*; do
    [ -e "$pj_f" ] || continue
    pj_i=${pj_f##*.}
    pj_i=${pj_i#"${pj_i%%[!0]*}"}
    pj_last=${pj_i:-0}
  done
  pj_total=0
  if [ "$pj_last" -ge 0 ]; then
    pj_z=$(pj_size "$(pj_chunk "$pj_d" "$pj_last")")
    pj_total=$((pj_last * pj_c + ${pj_z:-0}))
  fi
  # from the chunk holding OFFSET, on past chunks that are gone and chunks read to their end already (one the full
  # volume cut short)
  pj_n=$(($2 / pj_c))
  pj_skip=$(($2 % pj_c))
  while [ "$pj_n" -lt "$pj_last" ]; do
    pj_f=$(pj_chunk "$pj_d" "$pj_n")
    pj_z=''
    [ -f "$pj_f" ] && pj_z=$(pj_size "$pj_f")
    if pj_digits "$pj_z" && [ "$pj_z" -gt "$pj_skip" ]; then break; fi
    pj_n=$((pj_n + 1))
    pj_skip=0
  done
  echo "@at $((pj_n * pj_c + pj_skip)) $pj_total $pj_e $pj_c"
  pj_left=$3
  while [ "$pj_left" -gt 0 ] && [ "$pj_n" -le "$pj_last" ]; do
    pj_f=$(pj_chunk "$pj_d" "$pj_n")
    [ -f "$pj_f" ] || break
    pj_z=$(pj_size "$pj_f")
    pj_digits "$pj_z" || break
    pj_take=$((pj_z - pj_skip))
    [ "$pj_take" -gt "$pj_left" ] && pj_take=$pj_left
    [ "$pj_take" -gt 0 ] || break
    echo "@c $pj_n $pj_skip $pj_take"
    tail -c +"$((pj_skip + 1))" "$pj_f" 2>/dev/null | head -c "$pj_take" | base64 | tr -d '\n'
    echo
    pj_left=$((pj_left - pj_take))
    [ "$pj_z" -lt "$pj_c" ] && break
    pj_n=$((pj_n + 1))
    pj_skip=0
  done
}

# pj_cancel ID GRACE_CS: the cancel marker; the runner's keeper sends SIGTERM, then SIGKILL after the grace. A job
# whose runner is gone gets them from here (docs/jobs.md#cancelling).
pj_cancel() {
  pj_d=$J/$1
  if [ ! -d "$pj_d" ]; then
    echo "@none"
    return 0
  fi
  if [ -f "$pj_d/end" ]; then
    echo "@ended"
    return 0
  fi
  [ -f "$pj_d/cancel" ] || pj_put "$pj_d" cancel "$(pj_now) $2"
  if pj_runner_alive "$pj_d"; then
    echo "@asked"
  elif pj_group_alive "$pj_d" || pj_marked "$1"; then
    if pj_group_alive "$pj_d"; then kill -TERM -"$pj_g" 2>/dev/null; else pj_g=0; fi
    pj_signal_marked "$1" TERM
    # shellcheck disable=SC2016 # the escalator's own arguments
    (setsid nohup sh -c 'sleep "$1"; [ "$2" -gt 1 ] && kill -KILL -"$2" 2>/dev/null
      for m in $(grep -l -s -z -x -F "PODTUI_JOB_ID=$3" /proc/[0-9]*/environ 2>/dev/null); do
        m=${m#/proc/}; kill -KILL "${m%/environ}" 2>/dev/null; done' podtui-cancel \
      "$((($2 + 99) / 100))" "$pj_g" "$1" </dev/null >/dev/null 2>&1 &)
    echo "@signalled"
  else
    echo "@gone"
  fi
}
