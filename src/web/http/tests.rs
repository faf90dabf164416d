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
