#!/usr/bin/env python3
"""Generate a small held-back check (corpus-holdout.jsonl) for the independent corpus.

Written after the scrubber was tuned on corpus-independent.jsonl, and measured once without
tuning on it afterwards: new places (files and formats the main corpus's templates do not use)
and new values (another seed), to see whether what was tuned on the main corpus carries over
to placements it did not see. Same rules as gen.py: synthetic values of stated formats only.

    python3 gen_holdout.py > corpus-holdout.jsonl
"""

import base64
import hashlib
import json
import random
import string
import sys
import uuid

R = random.Random(0x401D0)
UP, LO, DI = string.ascii_uppercase, string.ascii_lowercase, string.digits
AN, HEX, URLSAFE = UP + LO + DI, "0123456789abcdef", UP + LO + DI + "-_"
rows = []


def rnd(alphabet, n):
    while True:
        v = "".join(R.choice(alphabet) for _ in range(n))
        if (any(c.isdigit() for c in v) or not any(c.isdigit() for c in alphabet)) and (
                any(c.isalpha() for c in v) or not any(c.isalpha() for c in alphabet)):
            return v


def pos(kind, text, secrets):
    for s in secrets:
        assert s in text, (kind, s, text)
    rows.append({"kind": kind, "label": "pos", "text": text, "secrets": secrets, "source": "synthetic-holdout"})


def neg(kind, text, cls="benign"):
    rows.append({"kind": kind, "label": "neg", "neg_class": cls, "text": text, "secrets": [], "source": "synthetic-holdout"})


TOKENS = [
    ("github", lambda: "ghp_" + rnd(AN, 36)),
    ("gitlab", lambda: "glpat-" + rnd(URLSAFE, 20)),
    ("slack", lambda: "xoxp-" + rnd(DI, 11) + "-" + rnd(DI, 12) + "-" + rnd(DI, 13) + "-" + rnd(HEX, 32)),
    ("stripe", lambda: "sk_live_" + rnd(AN, 24)),
    ("npm", lambda: "npm_" + rnd(AN, 36)),
    ("openai", lambda: "sk-proj-" + rnd(URLSAFE, 60) + "T3BlbkFJ" + rnd(URLSAFE, 60)),
    ("aws-key-id", lambda: "AKIA" + rnd(UP + "234567", 16)),
    ("sendgrid", lambda: "SG." + rnd(URLSAFE, 22) + "." + rnd(URLSAFE, 43)),
    ("tencent", lambda: "AKID" + rnd(AN, 32)),
    ("sonarqube", lambda: "squ_" + rnd(HEX, 40)),
    ("buildkite", lambda: "bkua_" + rnd(HEX, 40)),
    ("doppler", lambda: "dp.pt." + rnd(AN, 43)),
    ("vault", lambda: "hvs." + rnd(URLSAFE, 24)),
    ("hex-secret", lambda: rnd(HEX, 40)),
    ("b64-secret", lambda: base64.b64encode(R.randbytes(30)).decode()),
]

# New places: the token is the value of a credential-named setting in a file type the main
# corpus does not use.
PLACES = [
    ('resource "vault_generic_secret" "x" {{\n  data_json = jsonencode({{ api_token = "{v}" }})\n}}', "api_token"),
    ("//npm.example.com/:_authToken={v}", None),
    ("spring.cloud.config.token={v}", None),
    ("    'api_key' => '{v}',", None),
    ('\tAPIToken: "{v}",', None),
    ("client.auth_token = {v!r}", None),
    ("$ export ACCESS_TOKEN={v} && ./deploy.sh", None),
    ("X-Api-Key: {v}", None),
    ("with:\n  token: ${{{{ secrets.X }}}}\n  api-key: {v}", None),
    ("<entry key=\"secretKey\">{v}</entry>", None),
    ("set -x API_SECRET {v}", None),
    ("ini_set('session.secret', '{v}');", None),
]
for kind, gen in TOKENS:
    for tpl, _ in R.sample(PLACES, 5):
        v = gen()
        pos(kind, tpl.format(v=v), [v])

# Name/value and key/value pairs in new dress.
for _ in range(10):
    v = rnd(AN + "!#%", 14)
    name = R.choice(["DB_PASSWORD", "smtp.password", "AdminSecret", "apiKey", "refresh_token"])
    pos("pair", R.choice([
        '<setting name="{n}" serializeAs="String"><value>{v}</value></setting>',
        '<add name="{n}" value="{v}"/>',
        '{{"Name":"{n}","Value":"{v}"}}',
        "  - key: {n}\n    value: '{v}'",
        '<property name="{n}" value="{v}"/>',
    ]).format(n=name, v=v), [v])

# Passwords in new places.
for _ in range(10):
    v = R.choice(["Falcon", "Meadow", "Granite"]) + rnd(DI, 3) + R.choice("!$&")
    pos("password", R.choice([
        "spring.datasource.password: {v}",
        "PGPASSWORD={v} psql -h db -U app",
        "echo '{v}' | sudo -S systemctl restart app",
        "mysql://app:{v}@db:3306/app",
        "wifi_psk = \"{v}\"",
        "requirepass {v}",
    ]).format(v=v), [v])

# Docker config auth (base64 of user:password) and kubeconfig tokens.
for _ in range(5):
    a = base64.b64encode(("ci:" + rnd(AN, 16)).encode()).decode()
    pos("docker-auth", '{"auths":{"registry.example.com":{"auth":"' + a + '"}}}', [a])
for _ in range(5):
    t = rnd(AN, 32)
    pos("kube-token", "users:\n- name: ci\n  user:\n    token: " + t, [t])

# Benign, in the same new places.
BENIGN = [
    'resource "aws_s3_bucket" "logs" {\n  bucket = "example-logs-eu"\n  tags = { team = "platform" }\n}',
    "//npm.example.com/:_authToken=${NPM_TOKEN}",
    "spring.cloud.config.uri=https://config.example.com",
    "    'api_key' => env('API_KEY'),",
    '\tAPIToken: os.Getenv("API_TOKEN"),',
    "$ export PATH=$HOME/.local/bin:$PATH && ./deploy.sh",
    "X-Request-Id: " + str(uuid.UUID(int=R.getrandbits(128), version=4)),
    "with:\n  token: ${{ secrets.GITHUB_TOKEN }}\n  fetch-depth: 0",
    '<entry key="timeoutSeconds">30</entry>',
    "set -x EDITOR nvim",
    "requirepass ${REDIS_PASSWORD}",
    '<setting name="PageSize" serializeAs="String"><value>50</value></setting>',
    '{"Name":"LogLevel","Value":"Information"}',
    "  - key: region\n    value: 'eu-central-1'",
    "users:\n- name: ci\n  user:\n    exec:\n      command: aws-iam-authenticator",
    '{"auths":{"registry.example.com":{}}}',
    "spring.datasource.password: ${DB_PASSWORD}",
    "echo 'deploy finished' | tee -a deploy.log",
    "image: registry.example.com/app@sha256:" + hashlib.sha256(R.randbytes(8)).hexdigest(),
    "sha1: " + hashlib.sha1(R.randbytes(8)).hexdigest(),
]
for b in BENIGN:
    neg("holdout-benign", b)
for _ in range(30):
    neg("holdout-benign", R.choice([
        "commit {c} (HEAD -> main, origin/main)",
        "Downloaded {p} v{a}.{b}.{d} (registry `crates-io`)",
        "[{t}] worker {n} finished job {h} in {a}.{b}s",
        "integrity sha512-{i}",
        "cache key: build-{h}-{n}",
        "ETag: W/\"{h}\"",
    ]).format(c=R.randbytes(20).hex(), p=R.choice(["serde", "tokio", "regex"]), a=R.randrange(10), b=R.randrange(100),
              d=R.randrange(50), t="2024-06-0%d" % R.randrange(1, 9), n=R.randrange(64), h=R.randbytes(8).hex(),
              i=base64.b64encode(R.randbytes(64)).decode()))

seen = set()
for r in rows:
    if r["text"] in seen:
        continue
    seen.add(r["text"])
    r["id"] = f"hold-{r['label']}-{r['kind']}-{hashlib.sha1(r['text'].encode()).hexdigest()[:10]}"
    sys.stdout.write(json.dumps({k: r[k] for k in ["id", "text", "secrets", "kind", "label", "neg_class", "source"] if k in r}) + "\n")
