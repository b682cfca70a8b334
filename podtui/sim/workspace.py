"""What a demo pod's /workspace holds: a note on what this shell really is, and something colourful to run."""

from __future__ import annotations

README = """\
This is a simulated RunPod pod, part of `podtui --demo`.

The shell you are typing into is a real bash on your own machine, started in a sandbox folder that stands in
for this pod's container. /workspace is that folder. nvidia-smi answers with the simulated GPU's numbers.
Nothing here reaches RunPod, and nothing you run here costs money.

Try:  bash colors.sh     htop     vim README-demo.txt     ls --color
"""

# A coloured program for the console: 16 and 256 colours, true colour, attributes, wide characters, a progress
# bar as tqdm draws it. Plain bash and printf, so it runs on any machine the simulator runs on.
COLORS = r"""#!/usr/bin/env bash
printf '\033[1mpodtui console: colours and attributes\033[0m\n'
for i in $(seq 0 15); do printf '\033[48;5;%dm  \033[0m' "$i"; done; printf '  16 colours\n'
for i in $(seq 16 6 231); do printf '\033[48;5;%dm \033[0m' "$i"; done; printf '  256 colours\n'
for i in $(seq 0 4 124); do printf '\033[48;2;%d;%d;%dm \033[0m' $((i*2)) $((255-i*2)) 128; done
printf '  true colour\n'
printf '\033[1mbold\033[0m \033[2mdim\033[0m \033[3mitalic\033[0m \033[4munderline\033[0m \033[7mreverse\033[0m '
printf '\033[9mstrike\033[0m \033[31mred\033[0m \033[32mgreen\033[0m \033[33myellow\033[0m \033[34mblue\033[0m\n'
printf 'wide: GPU 使用率 ✓ 学習 完了\n'
printf '\033[32mepoch 3/3\033[0m: 100%%|\033[36m%s\033[0m| 500/500 [00:42<00:00, 11.8it/s, loss=0.412]\n' \
  '██████████████████████████████'
printf '\033[1;34mcheckpoints\033[0m  \033[1;32mtrain.py\033[0m  \033[0mconfig.yaml  \033[1;34mdata\033[0m\n'
"""

FILES = {"README-demo.txt": README, "colors.sh": COLORS}
