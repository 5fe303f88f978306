//! A loopback HTTP/1.1 server: it records every request and answers as the test says (a JSON
//! body, bytes with a status and headers, an error, a redirect, a slow or an oversized
//! answer); and [`unused_port`], a port where nothing listens.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// Path and query, as sent.
    pub target: String,
    pub headers: Vec<(String, String)>,
    /// The request line and the header lines as they came, each ending in CRLF.
    pub head: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The decoded query parameters.
    pub fn query(&self) -> Vec<(String, String)> {
        let url = url::Url::parse(&format!("http://x{}", self.target)).unwrap();
        url.query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }

    pub fn param(&self, key: &str) -> Option<String> {
        self.query()
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
}

/// How to answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Status, extra headers, body (with Content-Length).
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Sleep, then answer.
    After(Duration, Box<Reply>),
    /// Headers at once, then the body one byte every `gap`.
    Trickle { body: Vec<u8>, gap: Duration },
    /// A body of `len` bytes with no Content-Length, streamed until done or the client leaves.
    Stream { len: usize },
}

impl Reply {
    pub fn json(status: u16, body: &serde_json::Value) -> Reply {
        Reply::Full {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
        }
    }

    /// `body` as it is, of `content_type`.
    pub fn bytes(status: u16, content_type: &str, body: Vec<u8>) -> Reply {
        Reply::Full {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body,
        }
    }

    pub fn text(status: u16, body: &str) -> Reply {
        Reply::Full {
            status,
            headers: vec![("Content-Type".into(), "text/html".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    pub fn redirect(location: &str) -> Reply {
        Reply::Full {
            status: 302,
            headers: vec![("Location".into(), location.into())],
            body: Vec::new(),
        }
    }
}

type Handler = Arc<dyn Fn(&Seen) -> Reply + Send + Sync>;

#[derive(Clone, Debug)]
pub struct Server {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    /// Serves on 127.0.0.1 on a free port until the test process ends.
    pub fn start(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler: Handler = Arc::new(handler);
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (handler, log) = (handler.clone(), log.clone());
                std::thread::spawn(move || serve(stream, &*handler, &log));
            }
        });
        Server { addr, seen }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// A port on 127.0.0.1 that was free a moment ago and where nothing listens (bound, then
/// let go): the address of a server that is down.
pub fn unused_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn serve(
    stream: TcpStream,
    handler: &(dyn Fn(&Seen) -> Reply + Send + Sync),
    log: &Mutex<Vec<Seen>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = String::new();
    if reader.read_line(&mut head).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = head.split_whitespace();
    let method = parts.next().unwrap_or("").to_owned();
    let target = parts.next().unwrap_or("").to_owned();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 {
            return;
        }
        if h.trim_end().is_empty() {
            break;
        }
        head.push_str(&h);
        let h = h.trim_end();
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
    }
    let seen = Seen {
        method,
        target,
        headers,
        head,
    };
    log.lock().unwrap().push(seen.clone());
    let reply = handler(&seen);
    let _ = answer(stream, reply);
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        302 => "Found",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        _ => "Status",
    }
}

fn answer(mut stream: TcpStream, reply: Reply) -> std::io::Result<()> {
    match reply {
        Reply::After(d, inner) => {
            std::thread::sleep(d);
            answer(stream, *inner)
        }
        Reply::Full {
            status,
            headers,
            body,
        } => {
            let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str(&format!(
                "Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            ));
            stream.write_all(head.as_bytes())?;
            stream.write_all(&body)?;
            stream.flush()
        }
        Reply::Trickle { body, gap } => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes())?;
            for b in body {
                stream.write_all(&[b])?;
                stream.flush()?;
                std::thread::sleep(gap);
            }
            Ok(())
        }
        Reply::Stream { len } => {
            stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
            )?;
            let chunk = vec![b' '; 64 * 1024];
            let mut sent = 0;
            while sent < len {
                let n = chunk.len().min(len - sent);
                stream.write_all(&chunk[..n])?;
                sent += n;
            }
            Ok(())
        }
    }
}
