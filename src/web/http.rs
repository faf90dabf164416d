//! A small HTTP/1.1 server for the page, on tokio's `TcpListener`, bound to the loopback
//! interface. It knows a handful of routes:
//!
//! | route | what |
//! |---|---|
//! | `GET /` | the page (one self-contained document) |
//! | `GET /state` | the state as JSON |
//! | `GET /events` | server-sent events: the state as JSON after every change |
//! | `GET /game?id=ID` | a game (by id or number) with every position, for replays |
//! | `POST /move?game=ID&pit=N` | the person sows pit `N` |
//! | `POST /new` | the next game starts |
//!
//! Every request is bounded (8 KiB of head, 1 KiB of body, 10 s to arrive, 64 connections
//! and 16 event streams at once); a malformed one gets a 4xx answer and the connection is
//! closed, never a panic. Requests must name this server in `Host` (a page elsewhere that
//! resolves its own name to 127.0.0.1 is refused), and a `POST` must come from the page
//! itself (its `Origin`, and a header no plain form can set), so another site open in the
//! same browser cannot move for the person.

use super::live::{Live, Mode, record_json};
use crate::results::find_game;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// The longest request head (request line and headers), in bytes.
pub const MAX_HEAD: usize = 8 * 1024;
/// The longest request body, in bytes (no route needs one).
pub const MAX_BODY: usize = 1024;
/// Most headers in a request.
const MAX_HEADERS: usize = 64;
/// Time for a whole request to arrive.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once; more are answered 503 and closed.
const MAX_CONNECTIONS: usize = 64;
/// Event streams at once.
const MAX_STREAMS: usize = 16;
/// A comment line on an idle event stream, so a closed page is noticed.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// The page, with `{{NONCE}}` where each response puts its script and style nonce.
const PAGE: &str = include_str!("page.html");

/// Starts serving `live` on `127.0.0.1:port` (0: a free port) on a thread of its own,
/// and returns the address. The server runs until the process ends.
pub fn serve(live: Arc<Live>, port: u16) -> io::Result<SocketAddr> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("kalaha-web".into())
        .spawn(move || {
            runtime.block_on(async move {
                match TcpListener::from_std(listener) {
                    Ok(l) => accept_loop(l, live, addr.port()).await,
                    Err(e) => tracing::error!("the page's server failed to start: {e}"),
                }
            })
        })?;
    Ok(addr)
}

async fn accept_loop(listener: TcpListener, live: Arc<Live>, port: u16) {
    let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let streams = Arc::new(Semaphore::new(MAX_STREAMS));
    loop {
        let (mut stream, _) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                // Out of file descriptors and the like: wait a little, keep serving.
                tracing::warn!("the page's server failed to accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            tokio::spawn(async move {
                let r = Response::error(503, "too many connections at once: try again");
                let _ = stream.write_all(&r.bytes()).await;
            });
            continue;
        };
        let live = live.clone();
        let streams = streams.clone();
        tokio::spawn(async move {
            let _permit = permit;
            connection(stream, live, port, streams).await;
        });
    }
}

/// Serves one request on `stream`, then closes it.
async fn connection(mut stream: TcpStream, live: Arc<Live>, port: u16, streams: Arc<Semaphore>) {
    let _ = stream.set_nodelay(true);
    let request = match tokio::time::timeout(REQUEST_TIMEOUT, read_request(&mut stream)).await {
        Ok(Ok(Some(r))) => r,
        Ok(Ok(None)) => return,
        Ok(Err(response)) => {
            let _ = stream.write_all(&response.bytes()).await;
            let _ = stream.shutdown().await;
            return;
        }
        Err(_) => {
            let r = Response::error(408, "the request did not arrive within 10 s");
            let _ = stream.write_all(&r.bytes()).await;
            return;
        }
    };
    if let Err(r) = check_origin(&request, port) {
        let _ = stream.write_all(&r.bytes()).await;
        let _ = stream.shutdown().await;
        return;
    }
    if request.method == "GET" && request.path == "/events" {
        match streams.try_acquire_owned() {
            Ok(permit) => {
                let _permit = permit;
                events(&mut stream, &live).await;
            }
            Err(_) => {
                let r = Response::error(503, "too many pages follow this run: close one");
                let _ = stream.write_all(&r.bytes()).await;
            }
        }
        let _ = stream.shutdown().await;
        return;
    }
    let response = route(&request, &live).await;
    let _ = stream.write_all(&response.bytes()).await;
    let _ = stream.shutdown().await;
}

/// A parsed request: the method, the path and query (decoded) and the headers (names in
/// lower case).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads one request (its body, if any, is read and dropped); `None` when the client
/// closed the connection before sending anything.
async fn read_request(stream: &mut TcpStream) -> Result<Option<Request>, Response> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    let end = loop {
        if let Some(end) = head_end(&buf) {
            break end;
        }
        if buf.len() > MAX_HEAD {
            return Err(Response::error(431, "the request head is over 8 KiB"));
        }
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|_| Response::error(400, "the request could not be read"))?;
        if n == 0 {
            if buf.is_empty() {
                return Ok(None);
            }
            return Err(Response::error(400, "the request ended before its headers"));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    if end > MAX_HEAD {
        return Err(Response::error(431, "the request head is over 8 KiB"));
    }
    let request = parse_head(&buf[..end]).map_err(|(status, why)| Response::error(status, &why))?;
    if request.header("transfer-encoding").is_some() {
        return Err(Response::error(
            411,
            "chunked request bodies are not accepted: send Content-Length",
        ));
    }
    let length = match request.header("content-length") {
        None => 0,
        Some(v) => v
            .trim()
            .parse::<usize>()
            .map_err(|_| Response::error(400, "Content-Length is not a number"))?,
    };
    if length > MAX_BODY {
        return Err(Response::error(413, "the request body is over 1 KiB"));
    }
    let mut have = buf.len() - end;
    while have < length {
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|_| Response::error(400, "the request body could not be read"))?;
        if n == 0 {
            return Err(Response::error(400, "the request body ended early"));
        }
        have += n;
    }
    Ok(Some(request))
}

/// The length of the head (up to and including the blank line), once it is complete.
fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4)
        .or_else(|| buf.windows(2).position(|w| w == b"\n\n").map(|i| i + 2))
}

/// Parses a request head. Errors are a status and the reason.
pub fn parse_head(head: &[u8]) -> Result<Request, (u16, String)> {
    let bad = |why: &str| (400, why.to_string());
    let text = std::str::from_utf8(head).map_err(|_| bad("the request head is not UTF-8"))?;
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let line = lines.next().unwrap_or("");
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad("the request line is not METHOD TARGET VERSION"));
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(bad("the method is not a word in capitals"));
    }
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err((505, format!("{version:?} is not HTTP/1.0 or HTTP/1.1")));
    }
    if !target.starts_with('/') {
        return Err(bad("the target is not a path"));
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let path = decode(path).ok_or_else(|| bad("the path is not well encoded"))?;
    let mut params = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let k = decode(k).ok_or_else(|| bad("the query is not well encoded"))?;
        let v = decode(v).ok_or_else(|| bad("the query is not well encoded"))?;
        params.push((k, v));
    }
    let mut headers = Vec::new();
    for line in lines.take_while(|l| !l.is_empty()) {
        if headers.len() == MAX_HEADERS {
            return Err((431, format!("more than {MAX_HEADERS} headers")));
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| bad("a header line has no ':'"))?;
        if name.is_empty() || name.bytes().any(|b| b.is_ascii_whitespace() || b < 0x21) {
            return Err(bad("a header name is empty or holds blanks"));
        }
        headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
    }
    Ok(Request {
        method: method.to_string(),
        path,
        query: params,
        headers,
    })
}

/// Percent-decoding (and `+` for a space); `None` for a bad escape or bytes that are not
/// UTF-8.
fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3)?;
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Refuses requests for another host name, and `POST`s not sent by the page itself.
fn check_origin(r: &Request, port: u16) -> Result<(), Response> {
    let allowed = [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ];
    let host = r.header("host").unwrap_or("").to_ascii_lowercase();
    if !allowed.contains(&host) {
        return Err(Response::error(
            421,
            &format!("this server answers as http://127.0.0.1:{port}/ only"),
        ));
    }
    if r.method == "POST" {
        let same_origin = r
            .header("origin")
            .is_none_or(|o| o == format!("http://{host}"));
        if !same_origin || r.header("x-kalaha").is_none() {
            return Err(Response::error(
                403,
                "moves are taken from this server's own page only",
            ));
        }
    }
    Ok(())
}

/// A whole response.
#[derive(Debug)]
pub struct Response {
    status: u16,
    content_type: &'static str,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

impl Response {
    fn json(status: u16, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type: "application/json; charset=utf-8",
            headers: Vec::new(),
            body: body.into(),
        }
    }

    fn error(status: u16, why: &str) -> Response {
        Response::json(status, serde_json::json!({ "error": why }).to_string())
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
             Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
             Referrer-Policy: no-referrer\r\nConnection: close\r\n",
            self.status,
            reason(self.status),
            self.content_type,
            self.body.len()
        );
        for (name, value) in &self.headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        out.push_str("\r\n");
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        421 => "Misdirected Request",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    }
}

/// The page, with a fresh nonce for its script and style, and the state as it is now (so
/// the first paint shows it). In the state, every `<` is written `\u003c`, so no text in
/// it can end the script element it sits in.
fn page(live: &Live) -> Response {
    let nonce = format!("{:032x}", rand::random::<u128>());
    let csp = format!(
        "default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; \
         connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
         frame-ancestors 'none'"
    );
    Response {
        status: 200,
        content_type: "text/html; charset=utf-8",
        headers: vec![("Content-Security-Policy", csp)],
        body: PAGE
            .replace("{{NONCE}}", &nonce)
            .replace("{{STATE}}", &live.snapshot().replace('<', "\\u003c"))
            .into_bytes(),
    }
}

/// Answers a request other than `/events`.
async fn route(r: &Request, live: &Arc<Live>) -> Response {
    let allow = |methods: &str| {
        let mut resp = Response::error(405, &format!("{} takes {methods} only", r.path));
        resp.headers.push(("Allow", methods.to_string()));
        resp
    };
    match (r.method.as_str(), r.path.as_str()) {
        ("GET", "/" | "/index.html") => page(live),
        ("GET", "/state") => Response::json(200, live.snapshot().as_bytes()),
        ("GET", "/favicon.ico") => Response {
            status: 204,
            content_type: "text/plain",
            headers: Vec::new(),
            body: Vec::new(),
        },
        ("GET", "/game") => game(r, live).await,
        ("POST", "/move") => {
            let game = r.param("game").unwrap_or("");
            let Some(pit) = r.param("pit").and_then(|p| p.parse::<i64>().ok()) else {
                return Response::error(400, "give the pit to sow as pit=N (a number)");
            };
            match live.person_move(game, pit) {
                Ok(()) => Response::json(200, "{\"ok\":true}"),
                Err(why) => Response::error(409, &why),
            }
        }
        ("POST", "/new") => match live.new_game() {
            Ok(()) => Response::json(200, "{\"ok\":true}"),
            Err(why) => Response::error(409, &why),
        },
        (_, "/" | "/index.html" | "/state" | "/game" | "/events" | "/favicon.ico") => allow("GET"),
        (_, "/move" | "/new") => allow("POST"),
        _ => Response::error(404, "no such page: the page is at /"),
    }
}

/// `GET /game?id=ID`: from memory, else from the results folder.
async fn game(r: &Request, live: &Arc<Live>) -> Response {
    let id = r.param("id").unwrap_or("").trim().to_string();
    if id.is_empty() || id.len() > 200 {
        return Response::error(400, "give a game id or number as id=...");
    }
    if let Some(json) = live.game_json(&id) {
        return Response::json(200, json);
    }
    let Some(dir) = live.dir().map(|d| d.to_path_buf()) else {
        return Response::error(404, &format!("no game {id:?} here"));
    };
    let found = {
        let id = id.clone();
        tokio::task::spawn_blocking(move || find_game(&dir, &id)).await
    };
    match found {
        Ok(Ok(Some(record))) => Response::json(200, record_json(&record)),
        Ok(Ok(None)) => Response::error(404, &format!("no game {id:?} in the results")),
        Ok(Err(e)) => Response::error(404, &format!("failed to read the games: {e}")),
        Err(_) => Response::error(404, "failed to read the games"),
    }
}

/// `GET /events`: the state after every change, until the page goes away.
async fn events(stream: &mut TcpStream, live: &Live) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\
                X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\nretry: 1000\n\n";
    if stream.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    // A tournament changes often: its pages are sent at most ten times a second.
    let pause = match live.mode() {
        Mode::Play | Mode::Watch => Duration::ZERO,
        Mode::Tournament | Mode::Results => Duration::from_millis(100),
    };
    let mut changes = live.subscribe();
    loop {
        changes.borrow_and_update();
        let message = format!("event: state\ndata: {}\n\n", live.snapshot());
        if stream.write_all(message.as_bytes()).await.is_err() {
            return;
        }
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        loop {
            match tokio::time::timeout(KEEPALIVE, changes.changed()).await {
                Ok(Ok(())) => break,
                Ok(Err(_)) => return,
                Err(_) => {
                    if stream.write_all(b": still here\n\n").await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn heads_are_parsed_and_garbage_is_refused() {
        let r = parse_head(
            b"POST /move?game=t-1&pit=3 HTTP/1.1\r\nHost: 127.0.0.1:80\r\nX-Kalaha: 1\r\n\r\n",
        )
        .unwrap();
        assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/move"));
        assert_eq!(r.param("pit"), Some("3"));
        assert_eq!(r.header("x-kalaha"), Some("1"));
        let r = parse_head(b"GET /game?id=a%20b+c HTTP/1.0\n\n").unwrap();
        assert_eq!(r.param("id"), Some("a b c"));
        for garbage in [
            &b"\xff\xfe\r\n\r\n"[..],
            b"GET\r\n\r\n",
            b"GET / HTTP/1.1 extra\r\n\r\n",
            b"get / HTTP/1.1\r\n\r\n",
            b"GET http://x/ HTTP/1.1\r\n\r\n",
            b"GET /%zz HTTP/1.1\r\n\r\n",
            b"GET /?a=%ff HTTP/1.1\r\n\r\n",
            b"GET / HTTP/1.1\r\nno colon\r\n\r\n",
            b"GET / HTTP/1.1\r\n: empty\r\n\r\n",
        ] {
            let e = parse_head(garbage).unwrap_err();
            assert_eq!(e.0, 400, "{:?}: {e:?}", String::from_utf8_lossy(garbage));
        }
        assert_eq!(parse_head(b"GET / HTTP/2\r\n\r\n").unwrap_err().0, 505);
        let many: String = (0..70).map(|i| format!("h{i}: v\r\n")).collect();
        let head = format!("GET / HTTP/1.1\r\n{many}\r\n");
        assert_eq!(parse_head(head.as_bytes()).unwrap_err().0, 431);
    }

    /// Sends `request` raw and returns the status and the whole answer.
    fn send(addr: SocketAddr, request: &[u8]) -> (u16, String) {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let _ = s.write_all(request);
        let _ = s.shutdown(std::net::Shutdown::Write);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        let text = String::from_utf8_lossy(&out).into_owned();
        let status = text
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        (status, text)
    }

    #[test]
    fn the_server_survives_garbage_and_answers_the_page() {
        let live = Live::new(Mode::Tournament, "t", None);
        let addr = serve(live, 0).unwrap();
        let host = format!("Host: 127.0.0.1:{}\r\n", addr.port());
        let get = |path: &str| format!("GET {path} HTTP/1.1\r\n{host}\r\n");
        let big = format!("GET / HTTP/1.1\r\n{host}X: {}\r\n\r\n", "a".repeat(20_000));
        let body = format!("POST /new HTTP/1.1\r\n{host}Content-Length: 999999\r\n\r\n");
        let chunked = format!("POST /new HTTP/1.1\r\n{host}Transfer-Encoding: chunked\r\n\r\n");
        let cases: Vec<(Vec<u8>, u16)> = vec![
            (b"\x00\x01\x02\r\n\r\n".to_vec(), 400),
            (
                b"GET / HTTP/1.1\r\nHost: evil.example:80\r\n\r\n".to_vec(),
                421,
            ),
            (b"GET / HTTP/1.1\r\n\r\n".to_vec(), 421),
            (big.into_bytes(), 431),
            (body.into_bytes(), 413),
            (chunked.into_bytes(), 411),
            (get("/nothing").into_bytes(), 404),
            (get("/move").into_bytes(), 405),
            (get("/game").into_bytes(), 400),
            (get("/game?id=t-1").into_bytes(), 404),
            (
                format!("POST /new HTTP/1.1\r\n{host}\r\n").into_bytes(),
                403,
            ),
            (
                format!(
                    "POST /new HTTP/1.1\r\n{host}Origin: http://evil.example\r\nX-Kalaha: 1\r\n\r\n"
                )
                .into_bytes(),
                403,
            ),
            (
                format!("POST /new HTTP/1.1\r\n{host}X-Kalaha: 1\r\n\r\n").into_bytes(),
                409,
            ),
            (
                format!("POST /move?pit=x HTTP/1.1\r\n{host}X-Kalaha: 1\r\n\r\n").into_bytes(),
                400,
            ),
            (
                format!("POST /move?pit=1 HTTP/1.1\r\n{host}X-Kalaha: 1\r\n\r\n").into_bytes(),
                409,
            ),
        ];
        for (request, status) in cases {
            let (got, text) = send(addr, &request);
            assert_eq!(
                got,
                status,
                "{:?}\n{text}",
                String::from_utf8_lossy(&request)
            );
            assert!(text.contains("\"error\""), "{text}");
        }
        // A client that closes at once, or mid-head.
        drop(std::net::TcpStream::connect(addr).unwrap());
        send(addr, b"GET / HT");
        let (status, text) = send(addr, get("/").as_bytes());
        assert_eq!(status, 200);
        assert!(text.contains("Content-Security-Policy: default-src 'none'"));
        let nonce = text
            .split("'nonce-")
            .nth(1)
            .and_then(|t| t.split('\'').next())
            .unwrap();
        assert!(text.contains(&format!("<script nonce=\"{nonce}\">")));
        let (status, text) = send(addr, get("/state").as_bytes());
        assert_eq!(status, 200);
        assert!(text.contains("\"mode\":\"tournament\""), "{text}");
    }

    #[test]
    fn names_in_the_page_cannot_end_its_script() {
        use crate::referee::{GameSetup, GameUpdate};
        use crate::rules::{Position, Rules};
        let live = Live::new(Mode::Tournament, "</script><script>alert(1)</script>", None);
        let setup = GameSetup {
            id: "t-1".into(),
            number: 1,
            round: 1,
            pair: 1,
            names: ["<!--".into(), "</SCRIPT >{{NONCE}}".into()],
            rules: Rules::default(),
            opening: Vec::new(),
            time: [crate::record::TimeControl::MoveTime(Duration::from_secs(1)); 2],
            margin: Duration::ZERO,
            adjudication: Default::default(),
        };
        live.observe(&GameUpdate::Started {
            setup: &setup,
            position: &Position::start(Rules::default()),
            moves: &[],
        });
        let body = String::from_utf8(page(&live).body).unwrap();
        let state = body
            .split("type=\"application/json\"")
            .nth(1)
            .and_then(|s| s.split("</script>").next())
            .unwrap();
        assert!(!state.contains('<'), "{state}");
        let json = state.split_once('>').unwrap().1;
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(v["boards"][0]["north"], "</SCRIPT >{{NONCE}}");
        assert_eq!(v["title"], "</script><script>alert(1)</script>");
        // The page inserts text with textContent only.
        for markup in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
        ] {
            assert!(!PAGE.contains(markup), "the page uses {markup}");
        }
        // Nothing comes from elsewhere.
        assert!(!PAGE.contains("http://") && !PAGE.contains("https://"));
        assert!(!PAGE.contains(" src="));
    }

    #[test]
    fn the_event_stream_sends_the_state_after_each_change() {
        let live = Live::new(Mode::Play, "t", None);
        let addr = serve(live.clone(), 0).unwrap();
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        write!(
            s,
            "GET /events HTTP/1.1\r\nHost: localhost:{}\r\n\r\n",
            addr.port()
        )
        .unwrap();
        let mut seen = String::new();
        let mut buf = [0u8; 4096];
        let mut read_until = |needle: &str, seen: &mut String| {
            while !seen.contains(needle) {
                let n = s.read(&mut buf).unwrap();
                assert!(n > 0, "the stream ended: {seen}");
                seen.push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        };
        read_until("\"version\":0", &mut seen);
        live.run_ended("done".into());
        read_until("\"ended\":\"done\"", &mut seen);
        assert!(seen.starts_with("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream"));
    }
}
