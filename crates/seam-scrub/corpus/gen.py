#!/usr/bin/env python3
"""Generate the independent scrubbing corpus (corpus-independent.jsonl).

Nothing here comes from another scanner's tests or from the development half of the shared
corpus. Secret values are synthetic: random strings drawn, with a fixed seed, from the format
each provider documents for its credentials (a prefix, a length, an alphabet), and put in the
places such values are found (env files, YAML, JSON, XML config, code, command lines, logs).
None is a real credential. Benign texts are ordinary material and look-alikes: config files,
logs, code, UUIDs, hashes, commit ids, base64 of prose, identifiers, placeholders after a
password word.

    python3 gen.py > corpus-independent.jsonl

The output is the same on every run (seeded); the format is that of the shared corpus: one JSON
object a line with id, text, secrets (exact substrings of text), kind, label (pos|neg),
neg_class (benign|near_miss, for negatives) and source.
"""

import base64
import hashlib
import json
import random
import string
import sys
import uuid

R = random.Random(0x5EA1719)

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DI = string.digits
AN = UP + LO + DI
HEX = "0123456789abcdef"
B64 = AN + "+/"
URLSAFE = AN + "-_"
B32 = UP + "234567"

rows = []


def rnd(alphabet, n):
    # A value with at least one digit and one letter where the alphabet has both, so that a
    # generated "secret" is never by chance a word.
    while True:
        v = "".join(R.choice(alphabet) for _ in range(n))
        has_d = any(c.isdigit() for c in v) or not any(c.isdigit() for c in alphabet)
        has_a = any(c.isalpha() for c in v) or not any(c.isalpha() for c in alphabet)
        if has_d and has_a:
            return v


def pos(kind, text, secrets, source="synthetic"):
    for s in secrets:
        assert s in text, (kind, s, text)
    rows.append({"kind": kind, "label": "pos", "text": text, "secrets": secrets, "source": source})


def neg(kind, text, cls="benign", source="synthetic"):
    rows.append({"kind": kind, "label": "neg", "neg_class": cls, "text": text, "secrets": [], "source": source})


def b64url(obj):
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")


# Places a token is found. {k} is the variable name, {v} the value.
PLACES = [
    "{K}={v}",
    "export {K}=\"{v}\"",
    "{k}: {v}",
    "  {k}: \"{v}\"",
    "{{\"{k}\": \"{v}\"}}",
    "const {k} = '{v}';",
    "{k} = \"{v}\"",
    "ENV {K} {v}",
    "--{kd} {v}",
    "[default]\n{k} = {v}",
    "os.environ[\"{K}\"] = \"{v}\"",
    "2024-05-02T10:11:12Z INFO loaded config {k}={v}",
]


def place(name, value):
    t = R.choice(PLACES)
    return t.format(K=name.upper(), k=name.lower(), kd=name.lower().replace("_", "-"), v=value)


# ------------------------------------------------------------------ provider formats
# (kind, variable name, generator): formats as each provider documents them.
def g(prefix, alphabet, n, suffix=""):
    return lambda: prefix + rnd(alphabet, n) + suffix


FORMATS = [
    ("github-pat-classic", "github_token", g("ghp_", AN, 36)),
    ("github-fine-grained", "gh_token", lambda: "github_pat_" + rnd(AN, 22) + "_" + rnd(AN, 59)),
    ("gitlab-pat", "gitlab_token", g("glpat-", URLSAFE, 20)),
    ("slack-bot-token", "slack_bot_token", lambda: "xoxb-" + rnd(DI, 12) + "-" + rnd(DI, 13) + "-" + rnd(AN, 24)),
    ("stripe-secret-key", "stripe_key", g("sk_live_", AN, 99)),
    ("stripe-restricted-key", "stripe_restricted", g("rk_live_", AN, 99)),
    ("aws-access-key-id", "aws_access_key_id", g("AKIA", UP + "234567", 16)),
    ("openai-project-key", "openai_api_key", lambda: "sk-proj-" + rnd(URLSAFE, 74) + "T3BlbkFJ" + rnd(URLSAFE, 74)),
    ("anthropic-api-key", "anthropic_api_key", lambda: "sk-ant-api03-" + rnd(URLSAFE, 93) + "AA"),
    ("huggingface-token", "hf_token", g("hf_", UP + LO, 34)),
    ("npm-token", "npm_token", g("npm_", AN, 36)),
    ("pypi-token", "pypi_token", g("pypi-AgEIcHlwaS5vcmc", URLSAFE, 70)),
    ("sendgrid-api-key", "sendgrid_api_key", lambda: "SG." + rnd(URLSAFE, 22) + "." + rnd(URLSAFE, 43)),
    ("digitalocean-pat", "do_token", g("dop_v1_", HEX, 64)),
    ("hashicorp-vault-token", "vault_token", g("hvs.", URLSAFE, 90)),
    ("doppler-token", "doppler_token", g("dp.st.", AN, 43)),
    ("shopify-token", "shopify_token", g("shpat_", HEX, 32)),
    ("linear-api-key", "linear_key", g("lin_api_", AN, 40)),
    ("postman-api-key", "postman_key", lambda: "PMAK-" + rnd(HEX, 24) + "-" + rnd(HEX, 34)),
    ("grafana-service-account", "grafana_token", lambda: "glsa_" + rnd(AN, 32) + "_" + rnd(HEX, 8)),
    ("dockerhub-pat", "docker_token", g("dckr_pat_", URLSAFE, 27)),
    ("pulumi-token", "pulumi_access_token", g("pul-", HEX, 40)),
    ("groq-api-key", "groq_api_key", g("gsk_", AN, 52)),
    ("tailscale-auth-key", "ts_authkey", lambda: "tskey-auth-" + rnd(AN, 17) + "-" + rnd(AN, 32)),
    ("new-relic-user-key", "newrelic_api_key", g("NRAK-", UP + DI, 27)),
    ("supabase-secret", "supabase_key", g("sb_secret_", URLSAFE, 31)),
    # Formats that were not in the shape list when this corpus was written.
    ("tencent-cloud-secret-id", "tencentcloud_secret_id", g("AKID", AN, 32)),
    ("yandex-cloud-api-key", "yc_api_key", g("AQVN", URLSAFE, 36)),
    ("scaleway-access-key", "scw_access_key", g("SCW", UP + DI, 17)),
    ("contentful-pat", "contentful_token", g("CFPAT-", URLSAFE, 43)),
    ("asana-pat", "asana_token", lambda: "2/" + rnd(DI, 16) + "/" + rnd(DI, 16) + ":" + rnd(HEX, 32)),
    ("clickup-token", "clickup_token", lambda: "pk_" + rnd(DI, 8) + "_" + rnd(UP + DI, 32)),
    ("circleci-token", "circle_token", lambda: "CCIPAT_" + rnd(AN, 22) + "_" + rnd(HEX, 40)),
    ("buildkite-token", "buildkite_token", g("bkua_", HEX, 40)),
    ("sonarqube-token", "sonar_token", lambda: R.choice(["squ_", "sqp_", "sqa_"]) + rnd(HEX, 40)),
    ("woocommerce-key", "wc_consumer_secret", lambda: R.choice(["ck_", "cs_"]) + rnd(HEX, 40)),
    ("onepassword-secret-key", "op_secret_key",
     lambda: "A3-" + rnd(UP + DI, 6) + "-" + rnd(UP + DI, 6) + "-" + "-".join(rnd(UP + DI, 5) for _ in range(4))),
    ("fcm-server-key", "fcm_server_key", lambda: "AAAA" + rnd(URLSAFE, 7) + ":APA91b" + rnd(URLSAFE, 134)),
    ("intercom-access-token", "intercom_token",
     lambda: base64.b64encode(("tok:" + str(uuid.UUID(int=R.getrandbits(128))) + ":1:0").encode()).decode()),
    ("tavily-api-key", "tavily_api_key", g("tvly-", AN, 32)),
    ("firecrawl-api-key", "firecrawl_api_key", g("fc-", HEX, 32)),
    ("jina-api-key", "jina_api_key", g("jina_", URLSAFE, 60)),
    ("cerebras-api-key", "cerebras_api_key", g("csk-", LO + DI, 48)),
    ("nvidia-api-key", "nvidia_api_key", g("nvapi-", URLSAFE, 64)),
    ("render-api-key", "render_api_key", g("rnd_", AN, 32)),
    ("mailersend-token", "mailersend_api_key", g("mlsn.", HEX, 64)),
    ("salesforce-access-token", "sf_access_token",
     lambda: "00D" + rnd(AN, 15) + "!" + rnd(AN, 24) + "." + rnd(AN + "_", 70)),
    ("resend-api-key", "resend_api_key", lambda: "re_" + rnd(AN, 8) + "_" + rnd(AN, 24)),
    ("neon-api-key", "neon_api_key", g("napi_", LO + DI, 64)),
    ("azure-search-admin-key", "search_admin_key", lambda: rnd(AN, 42) + "AzSe" + rnd(AN, 6)),
    ("azure-servicebus-key", "sb_shared_key", lambda: rnd(B64, 33) + "+ASb" + rnd(AN, 6) + "="),
    ("azure-acr-password", "acr_password", lambda: rnd(AN, 42) + "+ACR" + rnd(AN, 6)),
    ("azure-function-key", "function_key", lambda: rnd(URLSAFE, 44) + "AzFu" + rnd(URLSAFE, 5) + "=="),
    ("paystack-secret-key", "paystack_secret", g("sk_live_", HEX, 40)),
    ("mapbox-secret-token", "mapbox_token",
     lambda: "sk." + b64url({"u": R.choice(["acme", "maps-team", "ada"]), "a": "cl" + rnd(LO + DI, 23)}) + "." + rnd(URLSAFE, 22)),
    ("age-secret-key", "age_identity", g("AGE-SECRET-KEY-1", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
]

for kind, name, gen in FORMATS:
    for _ in range(4):
        v = gen()
        pos(kind, place(name, v), [v])

# Tokens in running text: a log line, a command, a URL parameter.
for kind, name, gen in R.sample(FORMATS, 20):
    v = gen()
    t = R.choice([
        "curl -H 'Authorization: Bearer {v}' https://api.example.com/v1/me",
        "WARN retrying request with token {v} after 429",
        "https://api.example.com/v2/items?access_token={v}&page=2",
        "git remote set-url origin https://x-access-token:{v}@git.example.com/o/r.git",
    ]).format(v=v)
    pos(kind, t, [v])

# The same formats with no credential word or provider name nearby: only the format tells.
for kind, name, gen in FORMATS:
    v = gen()
    t = R.choice([
        "value: {v}",
        "args: [\"--quiet\", \"{v}\"]",
        "echo {v} >> build.log",
        "| {v} | staging | 2024-05-02 |",
        "item[3] = '{v}'",
    ]).format(v=v)
    pos(kind, t, [v])

# ------------------------------------------------------------------ provider name, random token
# Providers whose keys have no format of their own: only the name nearby says what they are.
CONTEXT_PROVIDERS = [
    ("datadog", "DD_API_KEY", lambda: rnd(HEX, 32)),
    ("datadog", "DATADOG_APP_KEY", lambda: rnd(HEX, 40)),
    ("mistral", "MISTRAL_API_KEY", lambda: rnd(AN, 32)),
    ("cohere", "COHERE_API_KEY", lambda: rnd(AN, 40)),
    ("pagerduty", "PAGERDUTY_TOKEN", lambda: rnd(URLSAFE, 20)),
    ("algolia", "ALGOLIA_ADMIN_KEY", lambda: rnd(HEX, 32)),
    ("linode", "LINODE_TOKEN", lambda: rnd(HEX, 64)),
    ("vultr", "VULTR_API_KEY", lambda: rnd(UP + DI, 36)),
    ("hetzner", "HCLOUD_TOKEN", lambda: rnd(AN, 64)),
    ("mailjet", "MJ_APIKEY_PRIVATE", lambda: rnd(HEX, 32)),
    ("postmark", "POSTMARK_SERVER_TOKEN", lambda: str(uuid.UUID(int=R.getrandbits(128)))),
    ("trello", "TRELLO_TOKEN", lambda: rnd(HEX, 64)),
    ("rollbar", "ROLLBAR_ACCESS_TOKEN", lambda: rnd(HEX, 32)),
    ("bugsnag", "BUGSNAG_API_KEY", lambda: rnd(HEX, 32)),
    ("deepgram", "DEEPGRAM_API_KEY", lambda: rnd(HEX, 40)),
    ("assemblyai", "ASSEMBLYAI_API_KEY", lambda: rnd(HEX, 32)),
    ("zendesk", "ZENDESK_API_TOKEN", lambda: rnd(AN, 40)),
    ("snyk", "SNYK_TOKEN", lambda: str(uuid.UUID(int=R.getrandbits(128)))),
    ("cloudinary", "CLOUDINARY_API_SECRET", lambda: rnd(URLSAFE, 27)),
    ("pusher", "PUSHER_APP_SECRET", lambda: rnd(HEX, 20)),
    ("azure-devops", "AZURE_DEVOPS_PAT", lambda: rnd(LO + "234567", 52)),
    ("azure-openai", "AZURE_OPENAI_API_KEY", lambda: rnd(HEX, 32)),
    ("telnyx", "TELNYX_API_KEY", lambda: "KEY" + rnd(UP + DI, 26) + "_" + rnd(AN, 22)),
    ("twitch", "TWITCH_CLIENT_SECRET", lambda: rnd(LO + DI, 30)),
    ("gitea", "GITEA_TOKEN", lambda: rnd(HEX, 40)),
]
for kind, name, gen in CONTEXT_PROVIDERS:
    for _ in range(2):
        v = gen()
        pos(kind, place(name, v), [v])

# ------------------------------------------------------------------ key/value pairs (wrong span)
PASSWORDISH = ["ClearTextPassword", "Password", "DbPassword", "SmtpPassword", "ApiSecret", "ClientSecret",
               "ConnectionPassword", "admin_password", "secret", "AuthToken"]


def password_value():
    # Passwords people choose: words and digits, punctuation, spaces in a quoted value.
    return R.choice([
        lambda: R.choice(["Winter", "Orchid", "Pelican", "Copper", "Harbor"]) + rnd(DI, 4) + R.choice("!#$%"),
        lambda: rnd(AN + "!@#%^*()-_+", 16),
        lambda: rnd(AN, 20),
        lambda: R.choice(["correct horse ", "blue velvet ", "tall ships "]) + rnd(LO + DI, 6),
    ])()


for _ in range(14):
    k = R.choice(PASSWORDISH)
    v = password_value().replace(" ", "_")
    pos("xml-key-value", f'    <add key="{k}" value="{v}" />', [v])
for _ in range(6):
    u = R.choice(["deploy", "ci-bot", "builder"])
    v = password_value().replace(" ", "_")
    text = ("<packageSourceCredentials>\n  <Internal>\n"
            f'    <add key="Username" value="{u}" />\n'
            f'    <add key="ClearTextPassword" value="{v}" />\n'
            "  </Internal>\n</packageSourceCredentials>")
    pos("nuget-config", text, [v])
for _ in range(10):
    k = R.choice(["password", "db_password", "client_secret", "apiToken", "SECRET_KEY"])
    v = password_value()
    text = R.choice([
        '{{"name": "{k}", "value": "{v}"}}',
        '[{{"name": "{k}", "value": "{v}", "type": "secret"}}]',
        '- name: {K}\n  value: "{v}"',
        '{{"key": "{k}", "value": "{v}"}}',
    ]).format(k=k, K=k.upper(), v=v)
    pos("json-name-value", text, [v])

# ------------------------------------------------------------------ keyword assignments, unusual values
KEYS = ["password", "db_pass", "my_password_super_secure", "secrete", "admin_pwd", "PASSWD", "userPassword",
        "mysql_root_password", "pass_phrase", "app_secret_value", "rootPass", "smtp_pass"]
for _ in range(30):
    k = R.choice(KEYS)
    kind_v = R.randrange(4)
    if kind_v == 0:
        v = R.choice(["my very secret ", "open sesame ", "let me in "]) + rnd(AN, 5)
        t = R.choice(['{k} = "{v}"', "{k}: '{v}'", '"{k}": "{v}",', '{k}="{v}"'])
    elif kind_v == 1:
        v = rnd(AN, 4) + "{" + rnd(AN + "!@#$%^&*", 6) + "}" + rnd(AN + ";:,.", 4)
        t = R.choice(['{k} = "{v}"', "{k}: '{v}'", '"{k}": "{v}",'])
    elif kind_v == 2:
        v = rnd(AN + "!@#$%^&*()[]{}<>?~", 14)
        t = R.choice(['{k}="{v}"', "{k}: '{v}'", '"{k}": "{v}"'])
    else:
        v = R.choice(["Tr0ub4dor", "Sunflower", "Kilimanjaro", "Velociraptor"]) + rnd(DI, 2) + R.choice("&*!")
        t = R.choice(["{k}={v}", "{k}: {v}", "{K}={v}"])
    pos("keyword-assignment", t.format(k=k, K=k.upper(), v=v), [v])

# ------------------------------------------------------------------ tokens in an encoding
for _ in range(8):
    user = R.choice(["admin", "svc", "deploy"])
    pw = rnd(AN, 14)
    text = R.choice([
        '{{"url": "https:\\/\\/{u}:{p}@db.example.com\\/app"}}',
        '"endpoint":"mongodb+srv:\\/\\/{u}:{p}@cluster0.example.net\\/test"',
    ]).format(u=user, p=pw)
    pos("json-escaped-url", text, [pw])
for _ in range(6):
    tok = "xoxb-" + rnd(DI, 12) + "-" + rnd(DI, 13) + "-" + rnd(AN, 24)
    pos("json-escaped-url", '{"hook":"https:\\/\\/api.example.com\\/v1\\/post?token=' + tok + '"}', [tok])
for _ in range(4):
    a, b, c = "T" + rnd(UP + DI, 10), "B" + rnd(UP + DI, 10), rnd(AN, 24)
    pos("json-escaped-url", '{"webhook":"https:\\/\\/hooks.slack.com\\/services\\/' + f"{a}\\/{b}\\/{c}" + '"}', [c])


for _ in range(8):
    header = b64url({"alg": "none", "typ": "JWT"})
    payload = b64url({"sub": rnd(DI, 8), "name": R.choice(["Ada", "Linus", "Grace"]), "iat": 1700000000 + R.randrange(10**6)})
    jwt = f"{header}.{payload}."
    pos("jwt-unsigned", R.choice(["token: {j}", "Authorization: Bearer {j}", "id_token={j}", "{j}"]).format(j=jwt),
        [f"{header}.{payload}"])
for _ in range(8):
    header = b64url({"alg": "HS256", "typ": "JWT"})
    payload = b64url({"sub": rnd(DI, 8), "exp": 1800000000 + R.randrange(10**6)})
    sig = base64.urlsafe_b64encode(R.randbytes(32)).decode().rstrip("=")
    jwt = f"{header}.{payload}.{sig}"
    pos("jwt", R.choice(["jwt = '{j}'", "Cookie: session={j}", "{j}"]).format(j=jwt), [jwt])
for _ in range(10):
    user = R.choice(["admin", "jenkins", "alice", "api"])
    pw = R.choice([rnd(AN, 12), R.choice(["Pelican", "Harbor"]) + rnd(DI, 3)])
    cred = base64.b64encode(f"{user}:{pw}".encode()).decode()
    pos("basic-auth-header", R.choice([
        "Authorization: Basic {c}",
        "-H 'Authorization: Basic {c}'",
        'headers = {{"Authorization": "Basic {c}"}}',
        "> authorization: basic {c}",
    ]).format(c=cred), [cred])
for _ in range(10):
    pw = R.choice([rnd(AN, 12), rnd(LO, 10), R.choice(["Pelican", "Harbor"]) + rnd(DI, 3)])
    t = R.choice([
        "curl -u :{p} https://api.example.com/v1/items",
        "curl -s -u \"$USER:{p}\" https://ci.example.com/api/json",
        "curl --user ':{p}' https://registry.example.com/v2/",
        "curl -u apikey:{p} https://api.example.com/v1/status",
    ]).format(p=pw)
    pos("curl-user", t, [pw])

# ------------------------------------------------------------------ connection strings, keys
for _ in range(10):
    u, pw = R.choice(["app", "postgres", "root"]), rnd(AN, 16)
    t = R.choice([
        "DATABASE_URL=postgresql://{u}:{p}@db.internal:5432/prod",
        "Server=tcp:db.example.com,1433;Database=app;User ID={u};Password={p};Encrypt=true;",
        "spring.datasource.password={p}",
        "redis://:{p}@cache.internal:6379/0",
        "amqp://{u}:{p}@mq.internal:5672/vhost",
    ]).format(u=u, p=pw)
    pos("connection-string", t, [pw])
for _ in range(4):
    body = "\n".join(rnd(B64, 64) for _ in range(6))
    key = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"
    pos("pem-private-key", key, [body.split("\n")[2]])

# ================================================================== benign texts
CONFIGS = [
    "[server]\nhost = 0.0.0.0\nport = 8080\nworkers = 4\nlog_level = info\n",
    "version: '3.8'\nservices:\n  web:\n    image: nginx:1.25.3\n    ports:\n      - \"80:80\"\n    depends_on:\n      - api\n",
    "{\n  \"name\": \"my-app\",\n  \"version\": \"2.4.1\",\n  \"private\": true,\n  \"scripts\": {\"build\": \"vite build\", \"test\": \"vitest run\"}\n}",
    "[package]\nname = \"widget\"\nversion = \"0.3.0\"\nedition = \"2021\"\n\n[dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\n",
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n        - name: api\n          image: registry.example.com/api:4f2a9c1\n",
    "<configuration>\n  <appSettings>\n    <add key=\"PageSize\" value=\"50\" />\n    <add key=\"Theme\" value=\"dark\" />\n    <add key=\"EnableCache\" value=\"true\" />\n  </appSettings>\n</configuration>",
    "<packageSources>\n  <add key=\"nuget.internal\" value=\"https://pkgs.contoso.net/v3/index.json\" protocolVersion=\"3\" />\n</packageSources>",
    "[{\"name\": \"LOG_LEVEL\", \"value\": \"debug\"}, {\"name\": \"REGION\", \"value\": \"eu-west-1\"}]",
    "env:\n  - name: PASSWORD_FILE\n    value: /run/secrets/db_password\n  - name: TZ\n    value: Europe/Berlin\n",
    "password_min_length = 12\npassword_require_symbols = true\npassword_expiry_days = 90\n",
    "# Set DB_PASSWORD in your environment before running\nDB_HOST=localhost\nDB_PORT=5432\n",
    "token_type: bearer\nexpires_in: 3600\nscope: read write\n",
    "[remote \"origin\"]\n\turl = https://github.com/example/project.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
    "server {\n    listen 443 ssl;\n    server_name example.com;\n    ssl_certificate /etc/ssl/certs/example.pem;\n    ssl_certificate_key /etc/ssl/private/example.key;\n}",
    "SELECT id, name, created_at FROM users WHERE last_login > now() - interval '30 days';",
]
for c in CONFIGS:
    neg("config", c)

LOGS = [
    "2024-05-02T10:11:12.345Z INFO  request_id=9f1c2b7e method=GET path=/api/v1/items status=200 duration_ms=12",
    "May  2 10:11:12 web01 sshd[23311]: Accepted publickey for deploy from 10.0.4.17 port 52114 ssh2",
    "127.0.0.1 - - [02/May/2024:10:11:12 +0000] \"GET /index.html HTTP/1.1\" 200 5123 \"-\" \"curl/8.5.0\"",
    "[2024-05-02 10:11:12] ERROR worker-3: connection reset by peer (retry 2/5)",
    "INFO  Password policy updated: minimum length 12",
    "WARN  token refresh scheduled in 300s",
    "DEBUG auth: user alice logged in via sso (session 3 of 5)",
    "Compiling serde_derive v1.0.197\n   Compiling tokio v1.37.0\n    Finished release [optimized] target(s) in 48.21s",
    "test result: ok. 128 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out; finished in 1.92s",
    "npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory.",
    "kernel: [12345.678901] EXT4-fs (sda1): mounted filesystem with ordered data mode.",
    "GET /api/v2/users?page=3&per_page=50 200 OK (14ms)",
]
for l in LOGS:
    neg("log", l)

CODE = [
    "fn verify_password(hash: &str, password: &str) -> bool {\n    argon2::verify_encoded(hash, password.as_bytes()).unwrap_or(false)\n}",
    "def get_token(self):\n    return self._session.headers.get(\"Authorization\")",
    "const password = process.env.DB_PASSWORD;\nconst apiKey = config.get('apiKey');",
    "if err := client.SetToken(os.Getenv(\"VAULT_TOKEN\")); err != nil {\n\treturn err\n}",
    "password = getpass.getpass(\"Password: \")",
    "let secretKey = try Keychain.load(account: accountName)",
    "public static final String PASSWORD_FIELD = \"password\";",
    "self.secret_key = settings.SECRET_KEY",
    "auth_header = f\"Bearer {access_token}\"",
    "token = request.headers['X-Auth-Token']",
    "export GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",
    "password: ${DB_PASSWORD:?must be set}",
    "api_key = os.environ.get(\"OPENAI_API_KEY\", \"\")",
    "<input type=\"password\" name=\"password\" placeholder=\"Password\" autocomplete=\"current-password\">",
    "class PasswordResetTokenGenerator(TokenGeneratorBase):",
    "secret_name = \"prod/app/database\"",
    "key_id = \"alias/app-kms-key\"",
    "cache_key = f\"user:{user_id}:profile\"",
    "for (const key of Object.keys(headers)) { delete headers[key]; }",
    "#define MAX_PASSWORD_LEN 128",
]
for c in CODE:
    neg("code", c)

# Placeholders after a password or key word.
PLACEHOLDERS = ["XXXXXXXXXXX", "abc", "shorter-version", "<your-password>", "changeme-please", "********",
                "${PASSWORD}", "{{ db_password }}", "$(cat /run/secrets/pw)", "REPLACE_ME", "your_api_key_here",
                "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", "example", "null", "<redacted>", "TODO", "...",
                "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx", "ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "%PASSWORD%",
                "process.env.SECRET", "os.getenv('PW')", "none", "dummy", "test", "-", "''", "<SECRET>",
                "AKIAXXXXXXXXXXXXXXXX", "YOUR_TOKEN"]
for p in PLACEHOLDERS:
    k = R.choice(["password", "db_password", "api_key", "secret", "token", "PASSWORD"])
    neg("placeholder", R.choice(["{k} = {p}", "{k}: {p}", "{k}=\"{p}\"", "\"{k}\": \"{p}\""]).format(k=k, p=p))

# Look-alikes: UUIDs, hashes, commit ids, base64 of prose, identifiers, version strings.
PROSE = ["The quick brown fox jumps over the lazy dog.", "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
         "All work and no play makes Jack a dull boy.", "It was the best of times, it was the worst of times."]
for i in range(12):
    neg("uuid", R.choice(["request_id: {u}", "\"id\": \"{u}\"", "trace={u}", "{u}"]).format(u=uuid.UUID(int=R.getrandbits(128), version=4)))
for i in range(12):
    data = R.randbytes(40)
    h = R.choice([hashlib.sha256, hashlib.sha1, hashlib.md5])(data).hexdigest()
    neg("hash", R.choice(["sha256sum: {h}  dist/app.tar.gz", "{h}  README.md", "checksum = \"{h}\"", "etag: \"{h}\"",
                          "integrity: sha512-{b}"]).format(h=h, b=base64.b64encode(hashlib.sha512(data).digest()).decode()))
for i in range(12):
    c = R.randbytes(20).hex()
    neg("commit", R.choice(["commit {c}\nAuthor: Ada <ada@example.com>\nDate:   Thu May 2 10:11:12 2024 +0000",
                            "{s} fix: handle empty config", "Merge: {s} {t}", "rev = \"{c}\""]).format(
        c=c, s=c[:7], t=R.randbytes(4).hex()[:7]))
for p in PROSE:
    neg("base64-prose", "data: " + base64.b64encode(p.encode()).decode())
    neg("base64-prose", "content: \"" + base64.b64encode((p + " " + p).encode()).decode() + "\"")
IDENTS = ["getUserPasswordResetTokenExpiry", "PASSWORD_RESET_TOKEN_TTL_SECONDS", "validate_api_key_format",
          "SecretManagerServiceClient", "AuthenticationTokenProvider", "OAuth2AuthorizationCodeGrantFilter",
          "keyboard_interrupt_handler", "tokenize_and_lowercase", "passwordless_login_enabled",
          "KeyValueStoreBackend", "secret_rotation_interval_days", "credentials_provider_chain"]
for ident in IDENTS:
    neg("identifier", R.choice(["fn {i}() {{}}", "def {i}(self):", "import {{ {i} }} from './auth';", "{i} = True"]).format(i=ident))
for i in range(10):
    neg("version", R.choice(["image: postgres:16.2-alpine3.19", "go 1.22.3", "node v20.12.2 (npm v10.5.0)",
                             "Python 3.11.9 (main, Apr  2 2024, 08:25:04) [GCC 12.2.0]", "rustc 1.78.0 (9b00956e5 2024-04-29)",
                             "openssl 3.0.13 30 Jan 2024", "Linux web01 6.1.0-18-amd64 #1 SMP x86_64 GNU/Linux",
                             "github.com/stretchr/testify v1.9.0 h1:HtqpIVDClZ4nwg75+f6Lvsy/wHu+3BoSGCbBAcpTsTg=",
                             "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
                             "ami-0c55b159cbfafe1f0 in us-east-1"][i]))
# Random-looking values that are not secrets, next to words that say so.
for i in range(10):
    v = rnd(AN, 24)
    neg("public-id", R.choice(["public_key: {v}", "client_id = \"{v}\"", "build_id: {v}", "image_digest={v}", "pk_live_{v}"]).format(v=v))
# Ordinary lines with machine-made ids that are not credentials.
for i in range(40):
    t = R.choice([
        "trace_id={a} span_id={b} service=checkout",
        "Pulling fs layer {b12}\nDigest: sha256:{a64}",
        "GET https://cdn.example.com/assets/app.{b8}.js 200",
        "Uploaded s3://build-artifacts/{a}/bundle.zip (4.2 MB)",
        "session closed for user {u} (uid=1000), job {b}",
        "Created pull request #{n}: https://github.com/example/project/pull/{n}",
        "x-request-id: {a}",
        "ERROR [{b8}] payment declined: card_declined (code {n})",
        "mail from <noreply@example.com> to <ops@example.com> id={B}",
        "ref: refs/heads/feature/{w}-{n}",
    ]).format(a=rnd(HEX, 32), b=rnd(HEX, 16), b8=rnd(HEX, 8), b12=rnd(HEX, 12), a64=rnd(HEX, 64),
              u=R.choice(["alice", "bob", "deploy"]), n=R.randrange(100, 99999), B=rnd(UP + DI, 14),
              w=R.choice(["login-page", "token-refresh", "password-reset", "secret-rotation"]))
    neg("log-ids", t)

# Near misses: a provider's prefix with the wrong length or alphabet.
for i in range(10):
    neg("near-miss", R.choice(["ghp_" + rnd(AN, 10), "AKIA" + rnd(LO, 16), "xoxb-" + rnd(LO, 6), "glpat-" + rnd(AN, 5),
                               "sk_live_" + rnd(AN, 4)]), cls="near_miss")

# ------------------------------------------------------------------ write
seen = set()
for n, r in enumerate(rows):
    key = r["text"]
    if key in seen:
        continue
    seen.add(key)
    r["id"] = f"ind-{r['label']}-{r['kind']}-{hashlib.sha1(key.encode()).hexdigest()[:10]}"
    out = {k: r[k] for k in ["id", "text", "secrets", "kind", "label", "neg_class", "source"] if k in r}
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
