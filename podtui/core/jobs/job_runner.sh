# podtui's job runner, POSIX sh (docs/jobs.md#the-runner). podtui writes it into the job's folder DIR, with the
# job's files, and starts it detached from every connection:
#   (cd / && setsid nohup sh DIR/runner.sh DIR </dev/null >>DIR/runner.log 2>&1 &)
# It runs DIR/cmd in a process group of its own, its output into the capped log, and records what became of it.
# The command is read from its file by bash (or sh): it never reaches a command line, nor the process list.

d=$1
volume=${d%/.podtui/jobs/*}
id=${d##*/}

now() { date +%s; }

# put NAME TEXT: a record file, replaced whole (a reader never sees half of it)
put() { printf '%s\n' "$2" >"$d/$1.new" && mv -f "$d/$1.new" "$d/$1"; }

# proc PID: sets state and start (in clock ticks since boot) of process PID; fails when there is none. A pid with
# its start time names one process: a pid alone is reused (docs/jobs.md#layout-on-the-pod).
proc() {
  [ -r "/proc/$1/stat" ] || return 1
  s=
  IFS= read -r s <"/proc/$1/stat" 2>/dev/null
  [ -n "$s" ] || return 1
  s=${s##*) }
  # shellcheck disable=SC2086 # the fields, split on purpose
  set -- $s
  state=$1 start=${20}
}
alive() { proc "$1" && [ "$state" != Z ]; }

# centiseconds since boot, immune to the wall clock being set
uptime_cs() {
  up=
  IFS=' ' read -r up _ </proc/uptime
  up=${up%.*}${up#*.}
  up=${up#"${up%%[!0]*}"}
  echo "${up:-0}"
}

nap() { sleep 0.5 2>/dev/null || sleep 1; }

# marked: the pids of every process that carries this job's PODTUI_JOB_ID, those that left its process group
# (setsid, a daemon's double fork) included (docs/jobs.md#cancelling)
marked() {
  # shellcheck disable=SC2013 # grep names files of /proc: words without blanks
  for m in $(grep -l -s -z -x -F "PODTUI_JOB_ID=$id" /proc/[0-9]*/environ 2>/dev/null); do
    m=${m#/proc/}
    echo "${m%/environ}"
  done
}
# end SIGNAL: the signal to the job's process group and to every process of it that left the group
end_all() {
  kill "-$1" -"$job" 2>/dev/null
  for m in $(marked); do kill "-$1" "$m" 2>/dev/null; done
}

digits() {
  case $1 in '' | *[!0-9]*) return 1 ;; esac
}
chunk='' head='' tail=''
read -r chunk head tail <"$d/settings"
if ! digits "$chunk" || ! digits "$head" || ! digits "$tail" || [ "$chunk" -eq 0 ]; then
  put note "its settings file is not podtui's (chunk, head and tail sizes): the command did not run"
  put end "125 $(now)"
  exit 0
fi

# the end record's room, taken now: on a volume that fills up meanwhile, the end is written into it in place
# (docs/jobs.md#the-runner)
put endslot "$(printf '%64s' '')"
proc $$
put runner "$$ $start"
put started "$(now)"
mkdir -p "$d/log"

# prune: delete the middle chunks beyond the cap, keeping the head and the last `tail` (docs/jobs.md#the-log-and-its-cap)
prune() {
  last=
  for f in "$d"/log/c.*; do [ -e "$f" ] && last=${f##*.}; done
  [ -n "$last" ] || return 0
  last=${last#"${last%%[!0]*}"}
  upto=$((${last:-0} - tail))
  for f in "$d"/log/c.*; do
    [ -e "$f" ] || continue
    i=${f##*.}
    i=${i#"${i%%[!0]*}"}
    if [ "${i:-0}" -ge "$head" ] && [ "${i:-0}" -le "$upto" ]; then rm -f "$f"; fi
  done
}

fifo=$d/out
rm -f "$fifo"
if ! mkfifo -m 600 "$fifo"; then
  put note "the runner could not make its log's pipe (mkfifo failed): the command did not run"
  put end "125 $(now)"
  exit 0
fi
# each new chunk deletes the one that left the tail, before split writes it; a chunk that cannot be written (a
# full disk) is read and thrown away, so the command never dies of a broken pipe
# shellcheck disable=SC2016 # split's shell expands these, for each chunk
filter='f=${FILE##*.}; i=${f#"${f%%[!0]*}"}; o=$((${i:-0} - '$tail')); '
# shellcheck disable=SC2016
filter=$filter'if [ "$o" -ge '$head' ]; then rm -f "${FILE%.*}.$(printf %08d "$o")"; fi; cat >"$FILE" || cat >/dev/null'
inline=
if split --help 2>&1 | grep -q -e --filter; then
  inline=yes
  SHELL=/bin/sh split -b "$chunk" -d -a 8 --filter="$filter" - "$d/log/c." <"$fifo" &
else # a split that gives up (a full disk) leaves the rest to cat, thrown away: no broken pipe for the command
  { split -b "$chunk" -d -a 8 - "$d/log/c." || cat >/dev/null; } <"$fifo" &
fi
sp=$!
exec 3>"$fifo"
rm -f "$fifo"

w=
[ -f "$d/workdir" ] && IFS= read -r w <"$d/workdir"
case $w in
  '') w=$volume ;;
  [~]) w=$HOME ;;
  [~]/*) w=$HOME/${w#??} ;;
  /*) ;;
  *) w=$volume/$w ;;
esac
shell='sh'
command -v bash >/dev/null 2>&1 && shell=bash
# what runs in the background of a shell without job control starts with SIGINT and SIGQUIT ignored, and a shell
# cannot undo that for its children: env does, where it can (GNU coreutils 8.31 and later)
reset=
env --default-signal=INT,QUIT true 2>/dev/null && reset='env --default-signal=INT,QUIT'
# The shell reads the command from its file and runs it with eval, so that what it says of it reads as in a shell of
# the user's own ("bash: line 1: ..."), not naming podtui's file; $1 is emptied first, as in a shell typed into.
# shellcheck disable=SC2016 # the job's shell expands these
run='__podtui_cmd=$(cat -- "$1") || exit 125; shift; eval "unset __podtui_cmd; $__podtui_cmd"'

job=
if cd "$w" 2>/dev/null; then
  # not a process group leader (no job control here), so setsid needs no fork: $! is the group's id. The job's
  # processes carry PODTUI_JOB_ID, by which a cancel finds those that left the group.
  # shellcheck disable=SC2086 # $reset is a command and its option, or nothing
  PODTUI_JOB_ID=$id setsid $reset "$shell" -c "$run" "$shell" "$d/cmd" </dev/null >&3 2>&3 3>&- &
  job=$!
  if proc "$job"; then put pgid "$job $start"; else put pgid "$job"; fi
else
  echo "podtui: the job's folder $w is not there or cannot be entered; the command did not run" >&3
  put note "its folder $w is not there or cannot be entered"
fi

# the keeper: the heartbeat, the cancel marker (SIGTERM, then SIGKILL after the grace), pruning without --filter
keep() {
  asked='' grace=1000 beat=0
  while kill -0 "$runner" 2>/dev/null; do
    t=$(uptime_cs)
    if [ -z "$asked" ] && [ -f "$d/cancel" ]; then
      g=
      read -r _ g <"$d/cancel"
      digits "$g" && grace=$g
      asked=$t
      end_all TERM
    fi
    if [ -n "$asked" ] && [ $((t - asked)) -ge "$grace" ]; then
      end_all KILL
    fi
    if [ $((t - beat)) -ge 1000 ]; then
      put beat "$(now)"
      beat=$t
    fi
    [ -n "$inline" ] || prune
    nap
  done
}

rc=1
if [ -n "$job" ]; then
  runner=$$
  keep &
  kp=$!
  wait "$job"
  rc=$?
  if [ -f "$d/cancel" ]; then # what is left of the job has the grace, then the keeper's SIGKILL
    i=0
    while { kill -0 -"$job" 2>/dev/null || [ -n "$(marked)" ]; } && [ "$i" -lt 7200 ]; do
      nap
      i=$((i + 1))
    done
  else # the job ends with its command; what it left running in the background goes on, and is said
    left=$(marked | wc -l)
    left=${left##* }
    if digits "$left" && [ "$left" -gt 0 ]; then
      put note "its command ended, leaving $left of its processes running (started in the background): they go on, not waited for"
    fi
  fi
  kill "$kp" 2>/dev/null
fi
exec 3>&-
i=0
while alive "$sp" && [ "$i" -lt 20 ]; do # the last bytes into the log; something left running may hold the pipe
  nap
  i=$((i + 1))
done
[ -n "$inline" ] || prune
if ! put end "$rc $(now)"; then # the volume is full: into the room taken at the start, then named end
  printf '%s\n' "$rc $(now)" 1<>"$d/endslot" && mv -f "$d/endslot" "$d/end"
fi
rm -f "$d/endslot"
