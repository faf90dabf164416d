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
pub(crate) struct Limits {
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
pub(crate) struct Served {
    pub addr: SocketAddr,
    token: Arc<Token>,
}

impl Served {
    /// The page's address, with its token: the one to open.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr, self.token.as_str())
    }

    /// The token that every request but `/favicon.ico` must carry.
    #[cfg(test)]
    pub(crate) fn token(&self) -> &str {
        self.token.as_str()
    }
}

/// Starts serving `live` on `127.0.0.1:port` (0: a free port) on a thread of its own,
/// with a new token, and returns where. The server runs until the process ends.
pub(crate) fn serve(live: Arc<Live>, port: u16) -> io::Result<Served> {
    serve_with(live, port, Limits::default())
}

/// [`serve`] within `limits`.
pub(crate) fn serve_with(live: Arc<Live>, port: u16, limits: Limits) -> io::Result<Served> {
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
pub(crate) struct Response {
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
mod tests;
