#!/usr/bin/env python3
"""An LLM as a witness policy: each decision is one chat-completions call.

    llm_chat.py --base-url https://api.example.com/v1 --model NAME \
                [--key-env OPENAI_API_KEY] [--template FILE] [--parallel 4]

For every decision witness asks (witness-policy/1 on stdin/stdout), the
observation is rendered into the prompt template (default:
llm_chat_prompt.txt beside this file, written for `model = "harness"`),
sent to an OpenAI-compatible `POST {base-url}/chat/completions`, and the
first JSON object in the reply is returned as the answer, with the
provider's token counts as usage. Provider trouble becomes the protocol's
error kinds, which witness retries and then falls back on:

    reply without a usable JSON answer   parse       (retryable)
    HTTP 429                             rate_limit  (retryable; waits for Retry-After, at most 10 s)
    HTTP 5xx, connection failure         provider    (retryable)
    HTTP 400/401/403/404                 provider    (not retryable)
    request timed out                    timeout     (retryable)
    content filter or a refusal          refusal     (not retryable)

The API key is read from the environment variable named by --key-env,
never from the command line (it would land in the manifest and the logs).
A real provider is not deterministic: its results are reproducible only
through witness's record log (`verify --all`, `run --policy-replay`).
Standard library only.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import string
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base-url", required=True, help="e.g. https://api.openai.com/v1")
    p.add_argument("--model", required=True)
    p.add_argument("--key-env", default="OPENAI_API_KEY",
                   help="environment variable holding the API key (empty: send none)")
    p.add_argument("--template", default=os.path.join(HERE, "llm_chat_prompt.txt"))
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--max-tokens", type=int, default=300)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per HTTP request")
    p.add_argument("--parallel", type=int, default=4, help="requests in flight per batch")
    p.add_argument("--json-mode", action="store_true",
                   help='ask for response_format {"type": "json_object"}')
    return p.parse_args()


def fail(message):
    print(f"llm_chat.py: {message}", file=sys.stderr)
    sys.exit(2)


class Policy:
    def __init__(self, args):
        self.args = args
        try:
            with open(args.template, encoding="utf-8") as f:
                self.template = string.Template(f.read())
        except OSError as e:
            fail(f"cannot read the prompt template {args.template}: {e}")
        self.key = ""
        if args.key_env:
            self.key = os.environ.get(args.key_env, "")
            if not self.key:
                fail(f"the environment variable {args.key_env} (--key-env) is not set")
        digest = hashlib.sha256()
        for part in (open(__file__, "rb").read(), self.template.template.encode(),
                     args.model.encode(), str(args.temperature).encode()):
            digest.update(hashlib.sha256(part).digest())
        self.identity = {"name": f"llm-chat:{args.model}", "version": "1",
                         "digest": digest.hexdigest()}

    def prompt(self, item):
        obs = item["obs"]
        fields = {k: v for k, v in obs.items() if not isinstance(v, (dict, list))}
        return self.template.safe_substitute(
            fields, observation=json.dumps(obs, indent=1, sort_keys=True),
            allowed=", ".join(item["allowed"]))

    def call(self, text):
        body = {"model": self.args.model, "temperature": self.args.temperature,
                "max_tokens": self.args.max_tokens,
                "messages": [{"role": "user", "content": text}]}
        if self.args.json_mode:
            body["response_format"] = {"type": "json_object"}
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        req = urllib.request.Request(self.args.base_url.rstrip("/") + "/chat/completions",
                                     data=json.dumps(body).encode(), headers=headers,
                                     method="POST")
        with urllib.request.urlopen(req, timeout=self.args.timeout) as r:
            return json.loads(r.read())

    def decide(self, item):
        started = time.monotonic()
        usage = {}

        def error(kind, message, retryable):
            usage["latency_ms"] = int((time.monotonic() - started) * 1000)
            return {"key": item["key"], "usage": usage,
                    "error": {"kind": kind, "message": message[:500], "retryable": retryable}}

        try:
            reply = self.call(self.prompt(item))
        except urllib.error.HTTPError as e:
            detail = e.read()[:300].decode("utf-8", "replace")
            if e.code == 429:
                wait = e.headers.get("Retry-After", "1")
                time.sleep(min(10.0, float(wait) if wait.replace(".", "", 1).isdigit() else 1.0))
                return error("rate_limit", f"HTTP 429: {detail}", True)
            return error("provider", f"HTTP {e.code}: {detail}", e.code >= 500)
        except (TimeoutError, OSError) as e:
            if "timed out" in str(e):
                return error("timeout", f"no reply within {self.args.timeout} s", True)
            return error("provider", f"cannot reach {self.args.base_url}: {e}", True)
        except ValueError as e:
            return error("provider", f"the provider's reply is not JSON: {e}", True)
        u = reply.get("usage") or {}
        for ours, theirs in (("input_tokens", "prompt_tokens"),
                             ("output_tokens", "completion_tokens")):
            if isinstance(u.get(theirs), int):
                usage[ours] = u[theirs]
        cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens")
        if isinstance(cached, int):
            usage["cached_tokens"] = cached
        if reply.get("model"):
            usage["model"] = str(reply["model"])
        try:
            choice = reply["choices"][0]
            message = choice.get("message") or {}
            content = message.get("content") or ""
        except (KeyError, IndexError, TypeError):
            return error("parse", f"no choices in the reply: {str(reply)[:200]}", True)
        if message.get("refusal") or choice.get("finish_reason") == "content_filter":
            return error("refusal", str(message.get("refusal") or "content filter"), False)
        answer = first_json_object(content)
        if answer is None:
            return error("parse", f"no JSON object in the reply: {content[:200]!r}", True)
        if answer.get("action") not in item["allowed"]:
            return error("parse", f"action {answer.get('action')!r} is not one of "
                                  f"{item['allowed']}: {content[:200]!r}", True)
        usage["latency_ms"] = int((time.monotonic() - started) * 1000)
        answer.pop("key", None)
        answer.pop("usage", None)
        return dict(answer, key=item["key"], usage=usage)


def first_json_object(text):
    """The first JSON object in `text` (code fences and prose around it allowed)."""
    decoder = json.JSONDecoder()
    at = text.find("{")
    while at != -1:
        try:
            value, _ = decoder.raw_decode(text, at)
            if isinstance(value, dict):
                return value
        except ValueError:
            pass
        at = text.find("{", at + 1)
    return None


def main():
    args = parse_args()
    policy = Policy(args)
    out = sys.stdout
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.parallel))
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            reply = {"type": "ready", "protocol": msg["protocol"], "policy": policy.identity,
                     "max_batch": 64}
        elif kind == "decide":
            items = list(pool.map(policy.decide, msg["items"]))
            reply = {"type": "decisions", "batch": msg["batch"], "items": items}
        elif kind == "bye":
            return
        else:
            print(f"llm_chat.py: unknown message {kind!r}", file=sys.stderr)
            continue
        out.write(json.dumps(reply, separators=(",", ":")) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
