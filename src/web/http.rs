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
//! Every `GET` route but `/events` answers `HEAD` too (the head alone).
//!
//! Every request is bounded (8 KiB of head, 1 KiB of body, 10 s to arrive, 10 s for each
//! write of the answer to be taken, 64 connections and 16 event streams at once); a
//! malformed one gets a 4xx answer and the connection is closed, never a panic. Requests
//! must name this server in `Host` (a page elsewhere that resolves its own name to
//! 127.0.0.1 is refused), and a `POST` must come from the page itself (its `Origin`, and a
//! header no plain form can set), so another site open in the same browser cannot move for
//! the person.

use super::live::{Live, Mode, record_json};
use super::request::{Request, read_request};
use crate::results::find_game;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// Time for a whole request to arrive.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Time for a whole answer (other than an event stream) to be taken by the client.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
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
                send(&mut stream, &r, true).await;
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
    let mut request = match tokio::time::timeout(REQUEST_TIMEOUT, read_request(&mut stream)).await {
        Ok(Ok(Some(r))) => r,
        Ok(Ok(None)) => return,
        Ok(Err((status, why))) => {
            return send(&mut stream, &Response::error(status, &why), true).await;
        }
        Err(_) => {
            let r = Response::error(408, "the request did not arrive within 10 s");
            return send(&mut stream, &r, true).await;
        }
    };
    if let Err(r) = check_origin(&request, port) {
        return send(&mut stream, &r, true).await;
    }
    // HEAD is GET without the body.
    let head_only = request.method == "HEAD";
    if head_only {
        request.method = "GET".to_string();
    }
    if request.method == "GET" && request.path == "/events" && !head_only {
        match streams.try_acquire_owned() {
            Ok(permit) => {
                let _permit = permit;
                events(&mut stream, &live).await;
                let _ = stream.shutdown().await;
            }
            Err(_) => {
                let r = Response::error(503, "too many pages follow this run: close one");
                send(&mut stream, &r, true).await;
            }
        }
        return;
    }
    let response = route(&request, &live).await;
    send(&mut stream, &response, !head_only).await;
}

/// Whether `bytes` were written within `limit` (a page that stops reading its
/// event stream is dropped rather than held forever).
async fn write_within(stream: &mut TcpStream, bytes: &[u8], limit: Duration) -> bool {
    matches!(
        tokio::time::timeout(limit, stream.write_all(bytes)).await,
        Ok(Ok(()))
    )
}

/// Writes `response` (its head only unless `body`) and closes the connection, giving up
/// after [`WRITE_TIMEOUT`] on a client that does not read.
async fn send(stream: &mut TcpStream, response: &Response, body: bool) {
    let bytes = response.bytes(body);
    let write = async {
        stream.write_all(&bytes).await?;
        stream.shutdown().await
    };
    let _ = tokio::time::timeout(WRITE_TIMEOUT, write).await;
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

    /// The response as sent: the head, and the body if `body` (not for `HEAD`).
    fn bytes(&self, body: bool) -> Vec<u8> {
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
        if body {
            bytes.extend_from_slice(&self.body);
        }
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
        422 => "Unprocessable Content",
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
        // Only `HEAD /events` gets here: a stream has no head of its own to give.
        ("GET", "/events") => allow("GET"),
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
        Ok(Ok(Some(record))) => match record.replay() {
            Ok(_) => Response::json(200, record_json(&record)),
            Err(e) => Response::error(
                422,
                &format!("game {id:?} does not replay under its rules: {e}"),
            ),
        },
        Ok(Ok(None)) => Response::error(404, &format!("no game {id:?} in the results")),
        Ok(Err(e)) => Response::error(404, &format!("failed to read the games: {e}")),
        Err(_) => Response::error(404, "failed to read the games"),
    }
}

/// `GET /events`: the state after every change, until the page goes away.
async fn events(stream: &mut TcpStream, live: &Live) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\
                X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\nretry: 1000\n\n";
    if !write_within(stream, head.as_bytes(), WRITE_TIMEOUT).await {
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
        if !write_within(stream, message.as_bytes(), WRITE_TIMEOUT).await {
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
                    if !write_within(stream, b": still here\n\n", WRITE_TIMEOUT).await {
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
        // HEAD: the head of GET, no body.
        let (status, text) = send(addr, format!("HEAD / HTTP/1.1\r\n{host}\r\n").as_bytes());
        assert_eq!(status, 200, "{text}");
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(body.is_empty(), "{body}");
        assert!(!head.contains("Content-Length: 0\r"), "{head}");
        let (status, _) = send(
            addr,
            format!("HEAD /events HTTP/1.1\r\n{host}\r\n").as_bytes(),
        );
        assert_eq!(status, 405);
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

    /// A client that stops reading is given up on, so it cannot hold a connection (or one
    /// of the few event streams) forever.
    #[test]
    fn a_client_that_does_not_read_is_dropped() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (mut server, _) = listener.accept().await.unwrap();
            let big = vec![b'x'; 64 << 20];
            let started = std::time::Instant::now();
            assert!(!write_within(&mut server, &big, Duration::from_millis(300)).await);
            assert!(started.elapsed() < Duration::from_secs(10));
            assert!(write_within(&mut server, b"", Duration::from_millis(300)).await);
            drop(client);
        });
    }
}
