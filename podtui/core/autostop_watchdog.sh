# The body of podtui's autostop watchdog, run on the pod by bash. podtui/core/autostop.py writes the settings
# above it (threshold, limit, every, retry, agent, jobs). Why it stops the pod the way it does:
# docs/runpod-facts.md#stopping-a-pod-from-inside-it. The pod's key never reaches a command line (the process
# list) nor the log: curl reads it from its standard input, python3 from its environment.

# shellcheck source=/dev/null
[ -r /etc/rp_environment ] && . /etc/rp_environment  # RunPod's variables, for a shell that did not load them
export RUNPOD_API_KEY
api=${RUNPOD_API_BASE_URL:-https://api.runpod.io}
pod_url="${api%/}/v2/pods/$RUNPOD_POD_ID"
low_since=
job_seen=

log() { echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $*"; }
uptime_s() { cut -d. -f1 /proc/uptime; }  # immune to the wall clock being set

# Text from RunPod or runpodctl as one short line for the log, the key masked should it ever be echoed.
one_line() {
  local text=${1//[[:cntrl:]]/ }
  [ -n "$RUNPOD_API_KEY" ] && text=${text//"$RUNPOD_API_KEY"/[key]}
  printf '%s' "${text:0:200}"
}

# The HTTP client in python3, for images without curl (its arguments: method, URL, JSON body or "").
py_http='
import os, sys, urllib.error, urllib.request
method, url, data = sys.argv[1:4]
request = urllib.request.Request(url, data.encode() or None, method=method)
request.add_unredirected_header("Authorization", "Bearer " + os.environ.get("RUNPOD_API_KEY", ""))
request.add_header("Accept", "application/json")
request.add_header("User-Agent", os.environ.get("PODTUI_AGENT", "podtui"))
if data:
    request.add_header("Content-Type", "application/json")
try:
    with urllib.request.urlopen(request, timeout=30) as answer:
        code, body = answer.status, answer.read()
except urllib.error.HTTPError as e:
    code, body = e.code, e.read()
except Exception as e:  # refused, no such host, timed out: nothing answered
    code, body = 0, str(getattr(e, "reason", e)).encode()
sys.stdout.write(body.decode("utf-8", "replace") + "\n%03d" % code)
'

# http METHOD URL [JSON]: sets code (000 when nothing answered), body (the answer, or why nothing did) and
# tool (what asked).
http() {
  local out rc key data=()
  [ -n "${3:-}" ] && data=(-H 'Content-Type: application/json' --data "$3")
  if command -v curl >/dev/null; then
    tool=curl
    key=${RUNPOD_API_KEY//[$'\r\n']/}
    key=${key//\\/\\\\}
    key=${key//\"/\\\"}
    # printf is bash's own, so no process carries the key; curl reads the header as a config line (-K -)
    out=$(printf 'header = "Authorization: Bearer %s"\n' "$key" |
      curl -sS -K - --connect-timeout 10 --max-time 30 -X "$1" -A "$agent" -H 'Accept: application/json' \
        "${data[@]}" -w '\n%{http_code}' "$2" 2>&1)
    rc=$?
    if [ "$rc" -ne 0 ]; then code=000 body=${out%%$'\n'*}; else code=${out##*$'\n'} body=${out%$'\n'*}; fi
  elif command -v python3 >/dev/null; then
    tool=python3
    out=$(PODTUI_AGENT=$agent python3 - "$1" "$2" "${3:-}" <<<"$py_http" 2>&1)
    code=${out##*$'\n'} body=${out%$'\n'*}
  else
    tool='' code=000 body="neither curl nor python3 is on this pod"
  fi
  [[ $code =~ ^[0-9]{3}$ ]] || code=000
}

# field NAME: a top-level string field of the answer in $body ("" when there is none).
field() {
  if command -v python3 >/dev/null; then
    python3 -c '
import json, sys
try:
    value = json.loads(sys.stdin.read()).get(sys.argv[1])
except Exception:
    value = None
print(value if isinstance(value, str) else "")' "$1" <<<"$body" 2>/dev/null
  else  # the first occurrence: the pod's own status comes before its env and runtime in RunPod's answers
    tr -d '\n' <<<"$body" | grep -o "\"$1\" *: *\"[^\"]*\"" | head -n 1 | sed 's/^[^:]*: *"//; s/"$//'
  fi
}

# What a refusal says (RFC 9457's title and detail), or what kind of page came instead.
problem() {
  local title detail
  title=$(field title) detail=$(field detail)
  if [ -n "$title$detail" ]; then
    one_line "$title${detail:+: $detail}"
  elif [[ $body == *"<html"* || $body == *"<HTML"* ]]; then
    printf 'an HTML page, not an answer from the API'
  else
    one_line "$body"
  fi
}

# confirmed LOOKS: the pod reads EXITED (or TERMINATED) on a GET, looking up to LOOKS times, 2 s apart.
confirmed() {
  local i status=
  for ((i = 1; i <= $1; i++)); do
    http GET "$pod_url"
    if [ "$code" = 200 ]; then
      status=$(field status)
      case $status in
        EXITED | TERMINATED)
          log "RunPod shows the pod $status"
          return 0
          ;;
      esac
    fi
    [ "$i" -lt "$1" ] && sleep 2
  done
  if [ "$code" = 200 ]; then
    log "the pod still reads ${status:-no status}"
  else
    log "could not read the pod back (HTTP $code): $(problem)"
  fi
  return 1
}

# Through REST v2 with the pod's own key: 0 stopped, 1 not (the log says why), 2 the API did not answer.
stop_via_api() {
  http POST "$pod_url/action" '{"action":"stop"}'
  local via="REST v2 through ${tool:-no HTTP client}"
  case $code in
    200)
      log "RunPod accepted the stop ($via); the pod reads $(field status)"
      confirmed 30 && return 0
      return 1
      ;;
    409)  # not valid in the pod's status now: stopping or stopped already, or locked
      log "RunPod says a stop is not valid now ($via, HTTP 409): $(problem)"
      confirmed 1 && return 0
      return 1
      ;;
    000)
      log "RunPod's API did not answer ($via): $(one_line "$body")"
      return 2
      ;;
    5??)
      log "RunPod's API failed ($via, HTTP $code): $(problem)"
      return 2
      ;;
    401 | 403) log "RunPod refused the pod's key ($via, HTTP $code): $(problem)" ;;
    429) log "RunPod asks to slow down ($via, HTTP 429)" ;;
    *) log "RunPod answered HTTP $code ($via): $(problem)" ;;
  esac
  return 1
}

# runpodctl ARGS...: 0 when what it printed says the pod stopped. Its exit status proves nothing: the legacy
# `stop pod` prints "stop failed" and exits 0.
runpodctl_says_stopped() {
  local out rc
  out=$(runpodctl "$@" 2>&1 </dev/null)
  rc=$?
  case $out in
    *"stop failed"* | *[Ee]rror*) ;;
    *"pod \"$RUNPOD_POD_ID\" stopped"* | *'"EXITED"'*)
      log "runpodctl $*: $(one_line "$out")"
      return 0
      ;;
  esac
  log "runpodctl $* did not stop the pod (exit status $rc): $(one_line "$out")"
  return 1
}

# Only when the API did not answer: the legacy form speaks GraphQL; `pod stop` spoke REST v1 up to 2.7.
stop_via_runpodctl() {
  if ! command -v runpodctl >/dev/null; then
    log "no runpodctl to fall back on"
    return 1
  fi
  log "falling back on runpodctl"
  runpodctl_says_stopped stop pod "$RUNPOD_POD_ID" || runpodctl_says_stopped pod stop "$RUNPOD_POD_ID"
}

stop_pod() {
  stop_via_api
  case $? in
    0) return 0 ;;
    2) stop_via_runpodctl ;;
    *) return 1 ;;
  esac
}

# a podtui job is running: one with no end recorded whose process group is alive and the job's: its leader the
# job's own by its start time, or, the leader gone, the pod not restarted since the job started (its pid 1 is older).
# A group id alone proves nothing: pids are given again once the pod restarts, and a daemon's double fork leaves
# groups without their leader (docs/jobs.md#the-watchdog-counts-jobs)
job_running() {
  local d g t s f started boot k v
  for d in "$jobs"/*/; do
    if [ ! -f "$d/pgid" ] || [ -f "$d/end" ]; then continue; fi
    g='' t=''
    read -r g t <"$d/pgid" 2>/dev/null
    if ! [[ $g =~ ^[0-9]+$ ]] || [ "$g" -le 1 ]; then continue; fi
    kill -0 -"$g" 2>/dev/null || continue
    if [ -r "/proc/$g/stat" ] && IFS= read -r s <"/proc/$g/stat" 2>/dev/null; then
      read -r -a f <<<"${s##*) }"
      [ "${f[19]}" = "$t" ] || continue
    else
      started='' boot=''
      read -r started _ <"$d/started" 2>/dev/null
      while read -r k v _; do [ "$k" = btime ] && boot=$v; done </proc/stat
      if [[ $started =~ ^[0-9]+$ && $boot =~ ^[0-9]+$ ]] && IFS= read -r s </proc/1/stat 2>/dev/null; then
        read -r -a f <<<"${s##*) }"
        [[ ${f[19]} =~ ^[0-9]+$ ]] && [ $((boot + f[19] / 100)) -gt $((started + 2)) ] && continue
      fi
    fi
    return 0
  done
  return 1
}

log "watching pod $RUNPOD_POD_ID: stop after ${limit} s under ${threshold}% GPU"
while true; do
  # the busiest GPU counts (one busy GPU of eight is a busy pod); anything but plain numbers is no reading
  util=$(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits 2>/dev/null |
    awk 'BEGIN { m = -1 } /^ *[0-9]+ *$/ { if ($1 + 0 > m) m = $1 + 0; n++; next } { bad = 1 }
         END { if (n && !bad) print m }')
  now=$(uptime_s)
  if command -v pgrep >/dev/null && pgrep -f 'runpodctl (send|receive)|sftp-server' >/dev/null; then
    util= # a transfer is running: the pod is in use, whatever its GPU does
  fi
  if job_running; then
    [ -z "$job_seen" ] && log "a podtui job is running: the pod is in use"
    job_seen=yes util=
  elif [ -n "$job_seen" ]; then
    log "no podtui job running any more"
    job_seen=
  fi
  if [ -z "$util" ]; then
    [ -n "$low_since" ] && log "no GPU reading, a transfer or a job running: idle clock reset"
    low_since=
  elif [ "$util" -lt "$threshold" ]; then
    [ -z "$low_since" ] && low_since=$now && log "GPU at ${util}%: idle clock started"
    if [ $((now - low_since)) -ge "$limit" ]; then
      log "idle for $((now - low_since)) s: stopping pod $RUNPOD_POD_ID"
      if stop_pod; then
        log "pod $RUNPOD_POD_ID stopped"
        exit 0
      fi
      log "could not stop the pod; trying again in ${retry} s"
      sleep "$retry"
    fi
  else
    [ -n "$low_since" ] && log "GPU at ${util}%: busy again"
    low_since=
  fi
  sleep "$every"
done
