#!/usr/bin/env python3
"""An LLM as a witness policy: each decision is one chat-completions call.

    llm_chat.py --base-url https://api.example.com/v1 --model NAME \
                [--key-env OPENAI_API_KEY] [--template FILE] [--parallel 4]

For every decision witness asks (witness-policy/1 on stdin/stdout), the
observation is rendered into the prompt template (default:
llm_chat_prompt.txt beside this file, written for `model = "harness"`),
sent to an OpenAI-compatible `POST {base-url}/chat/completions`, and the
first JSON object in the reply is returned as the answer, with the
provider's token counts as usage. The reply's content may be a string or a
list of parts (text parts are joined; reasoning, images and other parts are
skipped). Provider trouble becomes the protocol's error kinds, which
witness retries and then falls back on:

    reply without a usable JSON answer   parse       (retryable)
    an answer with NaN or Infinity       parse       (retryable; never sent on)
    HTTP 429                             rate_limit  (retryable; waits for Retry-After, at most 10 s)
    HTTP 5xx, connection failure         provider    (retryable)
    a reply cut off, not JSON            provider    (retryable)
    HTTP 400/401/403/404                 provider    (not retryable)
    request timed out                    timeout     (retryable)
    content filter or a refusal          refusal     (not retryable)

Every line written is strict JSON. Finding the JSON object takes time
linear in the reply's length, however the reply is made.

The API key is read from the environment variable named by --key-env,
never from the command line (it would land in the manifest and the logs).
A real provider is not deterministic: its results are reproducible only
through witness's record log (`verify --all`, `run --policy-replay`).
Standard library only.
"""

import argparse
import concurrent.futures
import hashlib
import http.client
import json
import math
import os
import re
import string
import sys
import time
import traceback
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
                    "error": {"kind": kind, "message": clean(message[:500]),
                              "retryable": retryable}}

        try:
            return self.answer(item, started, usage, error)
        except Exception as e:  # a slip here costs this decision, not the batch
            traceback.print_exc(file=sys.stderr)
            return error("provider", f"llm_chat.py failed on this reply: "
                                     f"{type(e).__name__}: {e}", True)

    def answer(self, item, started, usage, error):
        try:
            reply = self.call(self.prompt(item))
        except urllib.error.HTTPError as e:
            try:
                detail = e.read()[:300].decode("utf-8", "replace")
            except (OSError, http.client.HTTPException) as cut:
                detail = f"(the error's body was cut off: {cut!r})"
            if e.code == 429:
                wait = (e.headers.get("Retry-After") or "1").strip()
                time.sleep(min(10.0, float(wait) if wait.replace(".", "", 1).isdigit() else 1.0))
                return error("rate_limit", f"HTTP 429: {detail}", True)
            return error("provider", f"HTTP {e.code}: {detail}", e.code >= 500)
        except (TimeoutError, OSError) as e:
            if isinstance(e, TimeoutError) or "timed out" in str(e):
                return error("timeout", f"no reply within {self.args.timeout} s", True)
            return error("provider", f"cannot reach {self.args.base_url}: {e}", True)
        except http.client.HTTPException as e:
            # IncompleteRead (closed before Content-Length), a bad status line...
            return error("provider", f"the provider's reply was cut off or garbled: {e!r}", True)
        except (ValueError, RecursionError) as e:
            return error("provider", f"the provider's reply is not JSON: {e}", True)
        if not isinstance(reply, dict):
            return error("provider", f"the provider's reply is not a JSON object: "
                                     f"{str(reply)[:200]}", True)
        u = reply.get("usage")
        u = u if isinstance(u, dict) else {}
        for ours, theirs in (("input_tokens", "prompt_tokens"),
                             ("output_tokens", "completion_tokens")):
            if count(u.get(theirs)):
                usage[ours] = u[theirs]
        details = u.get("prompt_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        if count(cached):
            usage["cached_tokens"] = cached
        if reply.get("model"):
            usage["model"] = clean(str(reply["model"])[:200])
        choices = reply.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        if not isinstance(choice, dict):
            if reply.get("error"):  # some servers answer 200 with an error object
                return error("provider", f"the provider reported: {str(reply['error'])[:300]}",
                             True)
            return error("parse", f"no choices in the reply: {str(reply)[:200]}", True)
        message = choice.get("message")
        message = message if isinstance(message, dict) else {}
        content, refusal = message_text(message)
        if refusal is not None or choice.get("finish_reason") == "content_filter":
            return error("refusal", refusal or "content filter", False)
        if content is None:
            return error("parse", f"the reply's content is neither text nor a list of parts: "
                                  f"{str(message.get('content'))[:200]}", True)
        try:
            answer = first_json_object(content)
        except BadAnswer as e:
            return error("parse", str(e), True)
        if answer is None:
            return error("parse", f"no JSON object in the reply: {content[:200]!r}", True)
        if answer.get("action") not in item["allowed"]:
            return error("parse", f"action {answer.get('action')!r} is not one of "
                                  f"{item['allowed']}: {content[:200]!r}", True)
        answer.pop("key", None)
        answer.pop("usage", None)
        result = dict(answer, key=item["key"], usage=usage)
        try:  # what goes out must be strict JSON in UTF-8
            json.dumps(result, allow_nan=False, ensure_ascii=False).encode("utf-8")
        except ValueError as e:
            return error("parse", f"the model's answer cannot be sent on as JSON: {e}", True)
        usage["latency_ms"] = int((time.monotonic() - started) * 1000)
        return result


def count(v):
    """A token count as the protocol takes it: a whole number >= 0."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def clean(text):
    """`text` with anything UTF-8 cannot carry (lone surrogates) replaced."""
    return text.encode("utf-8", "replace").decode("utf-8")


def message_text(message):
    """(text, refusal) of a chat-completions message.

    `content` is a string, null, or a list of parts: the text parts
    ({"type": "text", "text": ...}, also "output_text", bare strings, and a
    text given as {"value": ...}) are joined in order; a {"type":
    "refusal"} part is a refusal; other parts (reasoning, images, audio) are
    skipped. With no text at all, the arguments of tool or function calls
    stand in for it. text is None when content has none of these shapes;
    refusal is None unless the model refused.
    """
    refusal = message.get("refusal")
    refusal = refusal if isinstance(refusal, str) and refusal.strip() else None
    content = message.get("content")
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
                continue
            if not isinstance(part, dict):
                continue
            kind = part.get("type", "text")
            if kind in ("text", "output_text"):
                t = part.get("text")
                if isinstance(t, dict):
                    t = t.get("value")
                if isinstance(t, str):
                    texts.append(t)
            elif kind == "refusal" and refusal is None:
                r = part.get("refusal")
                refusal = r if isinstance(r, str) and r.strip() else "the model refused"
    elif content is None:
        texts = []
    else:
        return None, refusal
    text = "".join(texts)
    if not text.strip():
        calls = message.get("tool_calls")
        calls = calls if isinstance(calls, list) else []
        calls = calls + [{"function": message.get("function_call")}]
        for call in calls:
            f = call.get("function") if isinstance(call, dict) else None
            args = f.get("arguments") if isinstance(f, dict) else None
            if isinstance(args, str) and args.strip():
                return args, refusal
    return text, refusal


_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"')
# A number or a literal; NaN and Infinity are let in (as json.loads does)
# so that an answer using them is found, then refused by decode_answer.
_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
                     r"|true|false|null|NaN|-?Infinity")
# Where an object can start: "{", then "}" or a key's opening quote.
_CANDIDATE = re.compile(r'\{[ \t\n\r]*["}]')
MAX_DEPTH = 500  # deeper nesting is not an answer (and would overflow json's recursion)

# What the scanner expects next.
_VALUE, _VALUE_OR_CLOSE, _KEY, _KEY_OR_CLOSE, _AFTER = range(5)


class BadAnswer(ValueError):
    """The model's output holds no answer that can be passed on."""


def first_json_object(text):
    """The first JSON object in `text` (code fences and prose around it
    allowed), or None: the object that starts at the leftmost "{" from
    which one parses, as json.JSONDecoder().raw_decode would find it.

    Raises BadAnswer when that object holds a number JSON cannot carry
    (NaN, Infinity, or one beyond a 64-bit float) or cannot be read.

    Time is linear in len(text): each start is checked by a scanner of our
    own (no exception, no copy), and an object that a scan opened inside
    another one is not scanned again: its fate (its end, or failure at the
    same place as its parent) is known from the parent's scan. A work bound
    backs this up for pathological texts (then: BadAnswer).
    """
    n = len(text)
    known = {}  # start of an object met inside an earlier scan -> its end, or -1
    budget = 4 * n + 10_000

    def scan(start):
        nonlocal budget
        stack = []  # (is_object, start) of the containers open
        i, expect = start, _VALUE
        while True:
            budget -= 1
            if budget < 0:
                raise BadAnswer("no JSON object found: the text is too tangled to search "
                                f"({n} characters)")
            i = _WS.match(text, i).end()
            if i >= n:
                break
            c = text[i]
            if expect == _AFTER:
                is_object = stack[-1][0]
                if c == ",":
                    i += 1
                    expect = _KEY if is_object else _VALUE
                    continue
                if c != ("}" if is_object else "]"):
                    break
            elif expect == _KEY or expect == _KEY_OR_CLOSE:
                if c != "}" or expect == _KEY:
                    m = _STRING.match(text, i) if c == '"' else None
                    if m is None:
                        break
                    i = _WS.match(text, m.end()).end()
                    if text.startswith(":", i):
                        i += 1
                        expect = _VALUE
                        continue
                    break
            elif c == "]" and expect == _VALUE_OR_CLOSE:
                pass
            elif c == "{" or c == "[":
                stack.append((c == "{", i))
                if len(stack) > MAX_DEPTH:
                    break
                i += 1
                expect = _KEY_OR_CLOSE if c == "{" else _VALUE_OR_CLOSE
                continue
            else:
                m = (_STRING if c == '"' else _SCALAR).match(text, i)
                if m is None:
                    break
                i = m.end()
                expect = _AFTER
                continue
            # A container closes at text[i].
            is_object, opened = stack.pop()
            i += 1
            if is_object:
                known[opened] = i
            if not stack:
                return i
            expect = _AFTER
        # Failed at i: every object still open fails here too.
        for is_object, opened in stack:
            if is_object:
                known[opened] = -1
        return -1

    for m in _CANDIDATE.finditer(text):
        at = m.start()
        end = known.get(at)
        if end is None:
            end = scan(at)
        if end > 0:
            return decode_answer(text[at:end])
    return None


def decode_answer(span):
    """The JSON object `span` as a dict, refusing numbers JSON cannot carry."""
    bad = []

    def constant(name):
        bad.append(name)

    def real(s):
        v = float(s)
        if not math.isfinite(v):
            bad.append(s)
        return v

    def integer(s):
        v = int(s)
        try:
            float(v)
        except OverflowError:
            bad.append(f"an integer of {len(s)} digits")
        return v

    try:
        value = json.loads(span, parse_constant=constant, parse_float=real, parse_int=integer)
    except (ValueError, RecursionError) as e:
        raise BadAnswer(f"the model's JSON object cannot be read: {e}") from None
    if bad:
        raise BadAnswer(f"the model's answer has {bad[0]}, which JSON does not allow "
                        f"(numbers must be finite): {span[:200]!r}")
    return value


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
        out.write(json.dumps(reply, separators=(",", ":"), allow_nan=False) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
