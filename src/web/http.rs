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
//! | `POST /resign?game=ID` | the person gives up the game in progress |
//! | `POST /new` | the next game starts (in `kalaha play`, the game in progress is resigned) |
//! | `POST /match?format=F` | the next games make a match of `F` (`best-of-3`, ...; `single`: none) |
//! | `GET /guide` | the rules guide's steps and cards ([`super::guide`]) |
//! | `GET /guide/move?lesson=ID&moves=N,...` | the person's sowings in a step of the guide, played by the rules |
//!
//! Every `GET` route but `/events` answers `HEAD` too (the head alone).
//!
//! Every route but `/favicon.ico` needs the page's token ([`super::access`]): without it
//! the answer is 403 and nothing is read or changed. Requests must also name this server
//! in `Host` (a page elsewhere that resolves its own name to 127.0.0.1 is refused), and a
//! `POST` must come from the page itself (its `Origin`, and a header no plain form can
//! set), so another site open in the same browser cannot move for the person.
//!
//! Every request is bounded (8 KiB of head, 1 KiB of body, 10 s to arrive, 10 s for each
//! write of the answer to be taken); a malformed one gets a 4xx answer and the connection
//! is closed, never a panic. Clients cannot starve the page ([`Limits`]): a connection
//! still sending its request gives way to a newer one, an event stream to a newer one (and
//! to the same page's next one), and every stream ends after a while, the page opening
//! the next.

use super::access::Token;
use super::guide;
use super::live::{Live, Mode, record_json};
use super::request::{Request, read_request};
use crate::results::find_game;
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, oneshot};

/// Time for a whole request to arrive.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Time for a whole answer (other than an event stream) to be taken by the client.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// A comment line on an idle event stream, so a closed page is noticed.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// How much the server holds for its clients at once.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections at once; more are answered 503 and closed.
    pub connections: usize,
    /// Connections still sending their request: when one more arrives, the one that has
    /// waited longest is closed, so that slow or idle clients cannot keep a page from
    /// loading.
    pub waiting: usize,
    /// Event streams at once: a new one closes the oldest (and a page's new stream its
    /// earlier one), so a page that loads is always followed.
    pub streams: usize,
    /// How long an event stream lasts; the page then opens the next one at once.
    pub stream_life: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            connections: 128,
            waiting: 32,
            streams: 16,
            stream_life: Duration::from_secs(60),
        }
    }
}

/// The page, with `{{NONCE}}` where each response puts its script and style nonce.
const PAGE: &str = include_str!("page.html");

/// A server that runs: its address and the token its requests must carry.
#[derive(Debug)]
pub struct Served {
    pub addr: SocketAddr,
    token: Arc<Token>,
}

impl Served {
    /// The page's address, with its token: the one to open.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr, self.token.as_str())
    }

    /// The token that every request but `/favicon.ico` must carry.
    #[cfg(test)]
    pub fn token(&self) -> &str {
        self.token.as_str()
    }
}

/// Starts serving `live` on `127.0.0.1:port` (0: a free port) on a thread of its own,
/// with a new token, and returns where. The server runs until the process ends.
pub fn serve(live: Arc<Live>, port: u16) -> io::Result<Served> {
    serve_with(live, port, Limits::default())
}

/// [`serve`] within `limits`.
pub fn serve_with(live: Arc<Live>, port: u16, limits: Limits) -> io::Result<Served> {
    let token = Arc::new(Token::new()?);
    let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let server = Server {
        live,
        port: addr.port(),
        token: token.clone(),
        limits,
        waiting: Slots::new(limits.waiting),
        streams: Slots::new(limits.streams),
    };
    std::thread::Builder::new()
        .name("kalaha-web".into())
        .spawn(move || {
            runtime.block_on(async move {
                match TcpListener::from_std(listener) {
                    Ok(l) => accept_loop(l, Arc::new(server)).await,
                    Err(e) => tracing::error!("the page's server failed to start: {e}"),
                }
            })
        })?;
    Ok(Served { addr, token })
}

/// What every connection needs.
struct Server {
    live: Arc<Live>,
    port: u16,
    token: Arc<Token>,
    limits: Limits,
    waiting: Arc<Slots>,
    streams: Arc<Slots>,
}

/// Places of which the oldest is given up when a new one is needed: each holder is told
/// to close by its [`Slot`].
struct Slots {
    limit: usize,
    held: Mutex<(u64, VecDeque<Held>)>,
}

struct Held {
    id: u64,
    key: Option<String>,
    close: oneshot::Sender<()>,
}

/// A place taken in [`Slots`]: `closed` resolves when it is given to another.
struct Slot {
    slots: Arc<Slots>,
    id: u64,
    closed: oneshot::Receiver<()>,
}

impl Slots {
    fn new(limit: usize) -> Arc<Slots> {
        Arc::new(Slots {
            limit: limit.max(1),
            held: Mutex::new((0, VecDeque::new())),
        })
    }

    /// Takes a place, closing the one held under the same `key`, and the oldest when
    /// all are taken.
    fn take(self: &Arc<Self>, key: Option<String>) -> Slot {
        let (tx, rx) = oneshot::channel();
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let (next, queue) = &mut *held;
        let id = *next;
        *next += 1;
        let mut evicted = Vec::new();
        if key.is_some() {
            while let Some(i) = queue.iter().position(|h| h.key == key) {
                evicted.extend(queue.remove(i));
            }
        }
        while queue.len() >= self.limit {
            evicted.extend(queue.pop_front());
        }
        queue.push_back(Held { id, key, close: tx });
        drop(held);
        for h in evicted {
            let _ = h.close.send(());
        }
        Slot {
            slots: self.clone(),
            id,
            closed: rx,
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.held.lock().unwrap().1.len()
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.slots.held.lock().unwrap_or_else(|e| e.into_inner());
        held.1.retain(|h| h.id != self.id);
    }
}

async fn accept_loop(listener: TcpListener, server: Arc<Server>) {
    let connections = Arc::new(Semaphore::new(server.limits.connections));
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
        let server = server.clone();
        tokio::spawn(async move {
            let _permit = permit;
            connection(stream, &server).await;
        });
    }
}

/// Serves one request on `stream`, then closes it.
async fn connection(mut stream: TcpStream, server: &Server) {
    let _ = stream.set_nodelay(true);
    let mut waiting = server.waiting.take(None);
    let read = tokio::time::timeout(REQUEST_TIMEOUT, read_request(&mut stream));
    let read = tokio::select! {
        r = read => r,
        // Newer connections need the place: this one was slow to send its request.
        _ = &mut waiting.closed => return,
    };
    drop(waiting);
    let mut request = match read {
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
    if let Err(r) = check_origin(&request, server.port) {
        return send(&mut stream, &r, true).await;
    }
    if let Err(r) = check_token(&request, &server.token) {
        return send(&mut stream, &r, true).await;
    }
    // HEAD is GET without the body.
    let head_only = request.method == "HEAD";
    if head_only {
        request.method = "GET".to_string();
    }
    if request.method == "GET" && request.path == "/events" && !head_only {
        // One stream per page (the page names itself), and the oldest gives way.
        let page = request
            .param("page")
            .filter(|p| !p.is_empty() && p.len() <= 64)
            .map(str::to_string);
        let slot = server.streams.take(page);
        events(&mut stream, &server.live, slot, server.limits.stream_life).await;
        let _ = stream.shutdown().await;
        return;
    }
    let response = route(&request, &server.live).await;
    send(&mut stream, &response, !head_only).await;
}

/// Refuses a request without the page's token (in the `X-Kalaha-Token` header, else as
/// `token=` in the query). Only `/favicon.ico` is served to anyone.
fn check_token(r: &Request, token: &Token) -> Result<(), Response> {
    if r.path == "/favicon.ico" {
        return Ok(());
    }
    let given = r.header("x-kalaha-token").or_else(|| r.param("token"));
    if given.is_some_and(|t| token.matches(t)) {
        return Ok(());
    }
    let why = "this page answers only the address that kalaha printed when it started, \
               http://127.0.0.1:PORT/?token=...: open that one";
    if r.path == "/" || r.path == "/index.html" {
        return Err(Response {
            status: 403,
            content_type: "text/plain; charset=utf-8",
            headers: Vec::new(),
            body: format!("403 Forbidden: {why}\n").into_bytes(),
        });
    }
    Err(Response::error(403, why))
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
        500 => "Internal Server Error",
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
        ("POST", "/resign") => match live.resign(r.param("game").unwrap_or("")) {
            Ok(()) => Response::json(200, "{\"ok\":true}"),
            Err(why) => Response::error(409, &why),
        },
        ("POST", "/new") => match live.new_game() {
            Ok(()) => Response::json(200, "{\"ok\":true}"),
            Err(why) => Response::error(409, &why),
        },
        ("POST", "/match") => {
            let Some(format) = r.param("format") else {
                return Response::error(400, "give the format as format=best-of-3 (or single)");
            };
            match live.choose_match(format) {
                Ok(()) => Response::json(200, "{\"ok\":true}"),
                Err(why) => Response::error(409, &why),
            }
        }
        ("GET", "/guide") => guide_lessons(r, live),
        ("GET", "/guide/move") => guide_move(r, live),
        (
            _,
            "/" | "/index.html" | "/state" | "/game" | "/events" | "/favicon.ico" | "/guide"
            | "/guide/move",
        ) => allow("GET"),
        (_, "/move" | "/new" | "/resign" | "/match") => allow("POST"),
        _ => Response::error(404, "no such page: the page is at /"),
    }
}

/// The guide's variant: the page's, or the one the request names.
fn guide_variant(r: &Request, live: &Live) -> Result<guide::Variant, guide::GuideError> {
    guide::Variant::parse(
        live.guide_variant(),
        r.param("empty_capture"),
        r.param("sweep"),
    )
}

/// `GET /guide[?empty_capture=..&sweep=..]`: the steps and cards of the guide.
fn guide_lessons(r: &Request, live: &Live) -> Response {
    match guide_variant(r, live).and_then(guide::lessons_json) {
        Ok(json) => Response::json(200, json),
        Err(e) => Response::error(e.status, &e.why),
    }
}

/// `GET /guide/move?lesson=ID&moves=N,M[&empty_capture=..&sweep=..]`: the person's
/// sowings in a lesson, played by the rules.
fn guide_move(r: &Request, live: &Live) -> Response {
    let played = guide_variant(r, live).and_then(|variant| {
        let moves = guide::parse_moves(r.param("moves"))?;
        guide::play(r.param("lesson").unwrap_or(""), &moves, variant)
    });
    match played.and_then(|p| {
        serde_json::to_string(&p).map_err(|e| guide::GuideError {
            status: 500,
            why: e.to_string(),
        })
    }) {
        Ok(json) => Response::json(200, json),
        Err(e) => Response::error(e.status, &e.why),
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

/// `GET /events`: the state after every change, until the page goes away, another stream
/// needs the place (`slot`), or `life` has passed; the page then opens the next stream at
/// once (it is told so by a `bye` event).
async fn events(stream: &mut TcpStream, live: &Arc<Live>, mut slot: Slot, life: Duration) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\
                X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\nretry: 1000\n\n";
    if !write_within(stream, head.as_bytes(), WRITE_TIMEOUT).await {
        return;
    }
    let end = tokio::time::Instant::now() + life;
    // A tournament changes often: its pages are sent at most ten times a second.
    let pause = match live.mode() {
        Mode::Play | Mode::Watch => Duration::ZERO,
        Mode::Tournament | Mode::Results => Duration::from_millis(100),
    };
    let mut changes = live.subscribe();
    let follower = live.follow();
    loop {
        let version = *changes.borrow_and_update();
        let message = format!("event: state\ndata: {}\n\n", live.snapshot());
        if !write_within(stream, message.as_bytes(), WRITE_TIMEOUT).await {
            return;
        }
        follower.sent(version);
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        loop {
            tokio::select! {
                changed = changes.changed() => match changed {
                    Ok(()) => break,
                    Err(_) => return,
                },
                _ = &mut slot.closed => {
                    let _ = write_within(stream, b"event: bye\ndata: another page\n\n", WRITE_TIMEOUT).await;
                    return;
                }
                _ = tokio::time::sleep_until(end) => {
                    let _ = write_within(stream, b"event: bye\ndata: time\n\n", WRITE_TIMEOUT).await;
                    return;
                }
                _ = tokio::time::sleep(KEEPALIVE) => {
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
        let served = serve(live, 0).unwrap();
        let addr = served.addr;
        let host = format!(
            "Host: 127.0.0.1:{}\r\nX-Kalaha-Token: {}\r\n",
            addr.port(),
            served.token()
        );
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
            opening: Default::default(),
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
        let served = serve(live.clone(), 0).unwrap();
        let addr = served.addr;
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        write!(
            s,
            "GET /events?token={} HTTP/1.1\r\nHost: localhost:{}\r\n\r\n",
            served.token(),
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

    /// A request without the page's token (or with another) reads nothing and changes
    /// nothing, even with the headers the page sends; with it, the person moves.
    #[test]
    fn without_the_token_nothing_is_read_or_changed() {
        let live = Live::new(Mode::Play, "t", None);
        let served = serve(live.clone(), 0).unwrap();
        let addr = served.addr;
        let port = addr.port();
        let (tx, mut rx) = oneshot::channel();
        live.await_person("g-1", vec![1, 2, 3], None, tx);
        let page_headers =
            format!("Host: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\nX-Kalaha: 1\r\n");
        let other = super::Token::new().unwrap();
        let near_miss = {
            let mut t = served.token().to_string();
            let last = if t.ends_with('0') { "1" } else { "0" };
            t.replace_range(63.., last);
            t
        };
        for bad in [
            String::new(),
            "X-Kalaha-Token: \r\n".to_string(),
            format!("X-Kalaha-Token: {}\r\n", other.as_str()),
            format!("X-Kalaha-Token: {near_miss}\r\n"),
            format!("X-Kalaha-Token: {}x\r\n", served.token()),
        ] {
            for (method, path) in [
                ("GET", "/"),
                ("GET", "/index.html"),
                ("HEAD", "/"),
                ("GET", "/state"),
                ("HEAD", "/state"),
                ("GET", "/events"),
                ("GET", "/game?id=g-1"),
                ("POST", "/move?game=g-1&pit=2"),
                ("POST", "/new"),
                ("POST", "/match?format=best-of-3"),
                ("GET", "/guide"),
                ("HEAD", "/guide"),
                ("GET", "/guide/move?lesson=sow&moves=3"),
                ("GET", "/nothing"),
            ] {
                let request = format!("{method} {path} HTTP/1.1\r\n{page_headers}{bad}\r\n");
                let (status, text) = send(addr, request.as_bytes());
                assert_eq!(status, 403, "{request}\n{text}");
                assert!(!text.contains("\"boards\""), "{text}");
            }
            // A wrong token in the query, and a right one in the query beside a wrong header.
            for path in [
                format!("/state?token={}", other.as_str()),
                format!("/state?token={near_miss}"),
            ] {
                let request = format!("GET {path} HTTP/1.1\r\n{page_headers}{bad}\r\n");
                assert_eq!(send(addr, request.as_bytes()).0, 403, "{request}");
            }
        }
        let wrong_header = format!(
            "POST /move?game=g-1&pit=2&token={} HTTP/1.1\r\n{page_headers}X-Kalaha-Token: {near_miss}\r\n\r\n",
            served.token()
        );
        assert_eq!(send(addr, wrong_header.as_bytes()).0, 403);
        // Nothing was taken: the move is still awaited, and no match was chosen.
        assert!(rx.try_recv().is_err());
        assert!(live.snapshot().contains("\"match\":null"));
        let v: serde_json::Value = serde_json::from_str(&live.snapshot()).unwrap();
        assert_eq!(v["version"], 1, "{v}");
        // The icon is no secret.
        let icon = format!("GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
        assert_eq!(send(addr, icon.as_bytes()).0, 204);
        // With the token: the page, the state, the move.
        let token = format!("X-Kalaha-Token: {}\r\n", served.token());
        let page = format!(
            "GET /?token={} HTTP/1.1\r\n{page_headers}\r\n",
            served.token()
        );
        let (status, text) = send(addr, page.as_bytes());
        assert_eq!(status, 200, "{text}");
        assert!(text.contains("\"mode\":\"play\""), "{text}");
        let state = format!("GET /state HTTP/1.1\r\n{page_headers}{token}\r\n");
        assert_eq!(send(addr, state.as_bytes()).0, 200);
        let sow = format!("POST /move?game=g-1&pit=2 HTTP/1.1\r\n{page_headers}{token}\r\n");
        let (status, text) = send(addr, sow.as_bytes());
        assert_eq!(status, 200, "{text}");
        assert_eq!(rx.try_recv().unwrap(), super::super::live::Choice::Pit(2));
        // The Origin and X-Kalaha checks still hold for a request with the token.
        let no_page = format!("POST /new HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{token}\r\n");
        assert_eq!(send(addr, no_page.as_bytes()).0, 403);
        let elsewhere = format!(
            "POST /new HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://evil.example\r\nX-Kalaha: 1\r\n{token}\r\n"
        );
        assert_eq!(send(addr, elsewhere.as_bytes()).0, 403);
        let (status, _) = send(
            addr,
            format!("GET /state HTTP/1.1\r\nHost: evil.example\r\n{token}\r\n").as_bytes(),
        );
        assert_eq!(status, 421);
    }

    /// The guide's routes play by the rules what the page sends, refuse what is not a
    /// lesson, a pit or a variant, and never answer without the token.
    #[test]
    fn the_guide_plays_by_the_rules_and_refuses_bad_input() {
        let live = Live::new(Mode::Play, "t", None);
        live.set_guide(
            guide::Variant {
                empty_capture: true,
                sweep: crate::rules::Sweep::None,
            },
            true,
        );
        let served = serve(live.clone(), 0).unwrap();
        let addr = served.addr;
        let head = format!(
            "Host: 127.0.0.1:{}\r\nX-Kalaha-Token: {}\r\n",
            addr.port(),
            served.token()
        );
        let get = |path: &str| {
            send(
                addr,
                format!("GET {path} HTTP/1.1\r\n{head}\r\n").as_bytes(),
            )
        };
        let body = |text: &str| text.split_once("\r\n\r\n").unwrap().1.to_string();
        // The session's variant by default, another when asked.
        let (status, text) = get("/guide");
        assert_eq!(status, 200, "{text}");
        let v: serde_json::Value = serde_json::from_str(&body(&text)).unwrap();
        assert_eq!(v["variant"]["sweep"], "none");
        assert_eq!(v["steps"][0]["rules"]["pits"], 3);
        let (_, text) = get("/guide?sweep=owner&empty_capture=false");
        let v: serde_json::Value = serde_json::from_str(&body(&text)).unwrap();
        assert_eq!(v["variant"]["sweep"], "owner");
        assert_eq!(v["variant"]["empty_capture"], false);
        let (status, text) = get("/guide/move?lesson=capture&moves=2");
        assert_eq!(status, 200, "{text}");
        let v: serde_json::Value = serde_json::from_str(&body(&text)).unwrap();
        assert_eq!(v["done"], true);
        assert_eq!(v["sowings"][0]["captured"], 6);
        assert_eq!(v["position"]["south"]["store"], 9);
        for (path, status) in [
            ("/guide/move?lesson=capture&moves=3", 422),
            ("/guide/move?lesson=capture&moves=9", 422),
            ("/guide/move?lesson=capture&moves=-1", 422),
            ("/guide/move?lesson=capture&moves=x", 400),
            ("/guide/move?lesson=capture", 400),
            (
                "/guide/move?lesson=capture&moves=1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1",
                400,
            ),
            ("/guide/move?lesson=%3Cb%3E&moves=1", 404),
            ("/guide/move?moves=1", 404),
            ("/guide/move?lesson=sow&moves=1&sweep=sideways", 400),
            ("/guide?empty_capture=maybe", 400),
        ] {
            let (got, text) = get(path);
            assert_eq!(got, status, "{path}: {text}");
            assert!(text.contains("\"error\""), "{text}");
            assert!(!text.contains("<b>"), "{text}");
        }
        let (status, _) = send(
            addr,
            format!("POST /guide HTTP/1.1\r\n{head}X-Kalaha: 1\r\n\r\n").as_bytes(),
        );
        assert_eq!(status, 405);
        // The page opens on the guide.
        assert!(live.snapshot().contains("\"learn\":true"));
    }

    #[test]
    fn a_new_place_closes_the_oldest_and_the_same_page_s_earlier_one() {
        let slots = Slots::new(2);
        let mut a = slots.take(None);
        let mut b = slots.take(Some("p".into()));
        assert!(a.closed.try_recv().is_err());
        let mut c = slots.take(None);
        assert!(a.closed.try_recv().is_ok(), "the oldest gives way");
        assert!(b.closed.try_recv().is_err());
        let mut d = slots.take(Some("p".into()));
        assert!(
            b.closed.try_recv().is_ok(),
            "a page's new stream replaces its old one"
        );
        assert!(c.closed.try_recv().is_err());
        assert_eq!(slots.len(), 2);
        drop((a, b));
        assert_eq!(slots.len(), 2);
        drop(c);
        assert_eq!(slots.len(), 1);
        assert!(d.closed.try_recv().is_err());
    }

    /// Reads `s` until `needle` has been seen; false if the stream ends first.
    fn read_until(s: &mut std::net::TcpStream, needle: &str, seen: &mut String) -> bool {
        let mut buf = [0u8; 8192];
        while !seen.contains(needle) {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => return false,
                Ok(n) => seen.push_str(&String::from_utf8_lossy(&buf[..n])),
            }
        }
        true
    }

    /// 64 idle event streams (with the token), 64 connections that send nothing and 64
    /// streams without the token do not keep the page from loading nor from being
    /// followed; the streams given up on are closed.
    #[test]
    fn idle_streams_and_silent_clients_do_not_starve_the_page() {
        let live = Live::new(Mode::Play, "t", None);
        let served = serve(live.clone(), 0).unwrap();
        let addr = served.addr;
        let port = addr.port();
        let open_stream = |query: &str| {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            write!(
                s,
                "GET /events?{query} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
            )
            .unwrap();
            s
        };
        let mut idle = Vec::new();
        for i in 0..64 {
            let mut s = open_stream(&format!("token={}&page=idle{i}", served.token()));
            let mut seen = String::new();
            assert!(
                read_until(&mut s, "event: state", &mut seen),
                "stream {i}: {seen}"
            );
            idle.push(s);
        }
        let mut refused = Vec::new();
        for _ in 0..64 {
            let mut s = open_stream("page=x");
            let mut seen = String::new();
            read_until(&mut s, "\r\n", &mut seen);
            assert!(seen.starts_with("HTTP/1.1 403"), "{seen}");
            refused.push(s);
        }
        let silent: Vec<_> = (0..64)
            .map(|_| std::net::TcpStream::connect(addr).unwrap())
            .collect();
        // The page loads at once, and its stream follows the game.
        let started = std::time::Instant::now();
        let page = format!(
            "GET /?token={} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n",
            served.token()
        );
        let (status, _) = send(addr, page.as_bytes());
        assert_eq!(status, 200);
        let mut s = open_stream(&format!("token={}&page=mine", served.token()));
        let mut seen = String::new();
        assert!(read_until(&mut s, "\"version\":0", &mut seen), "{seen}");
        live.run_ended("done".into());
        assert!(
            read_until(&mut s, "\"ended\":\"done\"", &mut seen),
            "{seen}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the page took {:?}",
            started.elapsed()
        );
        // All but the 15 newest idle streams were closed to make room, with a word why.
        let mut closed = 0;
        for mut s in idle.drain(..) {
            s.set_read_timeout(Some(Duration::from_millis(200)))
                .unwrap();
            let mut seen = String::new();
            if read_until(&mut s, "event: bye", &mut seen) {
                closed += 1;
            }
        }
        assert_eq!(closed, 64 - 15);
        drop((silent, refused));
    }

    #[test]
    fn an_event_stream_ends_after_its_life_and_says_so() {
        let live = Live::new(Mode::Play, "t", None);
        let limits = Limits {
            stream_life: Duration::from_millis(300),
            ..Limits::default()
        };
        let served = serve_with(live, 0, limits).unwrap();
        let mut s = std::net::TcpStream::connect(served.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        write!(
            s,
            "GET /events?token={} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
            served.token(),
            served.addr.port()
        )
        .unwrap();
        let started = std::time::Instant::now();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        assert!(out.ends_with("event: bye\ndata: time\n\n"), "{out}");
        assert!(started.elapsed() < Duration::from_secs(5));
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
