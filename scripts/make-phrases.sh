#!/usr/bin/env bash
# Builds the bundled phrases of the local voice agent: raw G.711 μ-law, 8 kHz, mono, no header
# (the format a phone leg carries, so the agent converts from it to whatever Settings declares).
# Needs espeak-ng (speech) and sox (resampling and μ-law encoding). Rerun after editing PHRASES.
set -euo pipefail

out_dir="$(cd "$(dirname "$0")/.." && pwd)/assets/phrases"
mkdir -p "$out_dir"
tmp_dir="$(mktemp -d)"
trap 'rm -rf "$tmp_dir"' EXIT

# id|text. Ids are what scenarios name; `unavailable` is the fallback callbridge plays when no agent
# answers, `caller-order` is spoken by the simulated caller, not by the agent.
PHRASES=(
  "greeting|Hello, thanks for calling. How can I help you today?"
  "help|Sure, I can help with that."
  "check|Let me check that for you."
  "anything-else|Is there anything else I can help you with?"
  "goodbye|Goodbye, and thanks for calling."
  "unavailable|I'm sorry, our assistant is unavailable right now. Please call back later."
  "caller-order|Hi, I'd like to check on my order please."
)

json="{"
sep=""
for entry in "${PHRASES[@]}"; do
  id="${entry%%|*}"
  text="${entry#*|}"
  espeak-ng -v en-us -s 160 -w "$tmp_dir/$id.wav" "$text"
  # Trim espeak's leading/trailing silence, leave 1 dB of headroom, then 8 kHz mono μ-law, raw.
  sox "$tmp_dir/$id.wav" -r 8000 -c 1 -e mu-law -b 8 -t raw "$out_dir/$id.ulaw" \
    silence 1 0.02 0.5% reverse silence 1 0.02 0.5% reverse gain -n -1
  json+="$sep\n  \"$id\": \"$text\""
  sep=","
done
json+="\n}\n"
printf '%b' "$json" >"$out_dir/phrases.json"
ls -l "$out_dir"
