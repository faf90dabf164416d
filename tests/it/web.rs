//! `kalaha play` in a real browser: headless Chromium, driven through WebDriver
//! (chromedriver) by the small client below, plays a whole game against `random` by
//! clicking enabled pit buttons, checks that a disabled button does not move, starts the
//! next game (the engine moves first) and sows with the keyboard, then checks the result
//! on the page against the recorded game. It also measures the time from a click to the
//! engine's reply on the page, and with `KALAHA_SCREENSHOTS=DIR` saves the page at 400
//! and 1200 px.
//!
//! Needs `chromium` and `chromedriver` (Debian: `apt-get install chromium chromium-driver`;
//! `KALAHA_CHROMIUM` and `KALAHA_CHROMEDRIVER` name other paths). When they are missing
//! the test fails under CI (`CI` set) and is skipped otherwise. Nothing leaves 127.0.0.1.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Chromium's flags: headless, no sandbox (CI runs as root), and nothing that reaches the
/// network (no updates, no sync, no first-run pages).
const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1200,900",
];

/// The W3C key of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

fn find_program(env: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p));
    }
    for name in names {
        let p = Path::new(name);
        if p.is_absolute() {
            if p.is_file() {
                return Some(p.to_path_buf());
            }
            continue;
        }
        let path = std::env::var_os("PATH")?;
        if let Some(found) = std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|c| c.is_file())
        {
            return Some(found);
        }
    }
    None
}

/// Kills and reaps a child process when dropped (also when the test fails).
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One HTTP/1.1 request to 127.0.0.1:`port`; the status and the body as JSON.
fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> Result<(u16, Value), String> {
    http_with(port, method, path, body, "")
}

/// Reads what has come, again when a signal interrupted the read (the test process gets
/// signals of the children it runs).
fn read_some(s: &mut TcpStream, chunk: &mut [u8]) -> Result<usize, String> {
    loop {
        match s.read(chunk) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other.map_err(|e| e.to_string()),
        }
    }
}

/// [`http`] with more header lines (`extra`, each ending in CRLF). A body that is not
/// JSON is returned as a string.
fn http_with(
    port: u16,
    method: &str,
    path: &str,
    body: Option<&Value>,
    extra: &str,
) -> Result<(u16, Value), String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(60)))
        .map_err(|e| e.to_string())?;
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
        body.len()
    );
    s.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
    // chromedriver keeps the connection open: read the head, then Content-Length bytes.
    let mut raw = Vec::new();
    let mut chunk = [0u8; 8192];
    let split = loop {
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = read_some(&mut s, &mut chunk)?;
        if n == 0 {
            return Err("the connection closed before the response head".into());
        }
        raw.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let length = head.lines().find_map(|l| {
        l.strip_prefix("content-length:")
            .and_then(|v| v.trim().parse::<usize>().ok())
    });
    let mut content = raw[split + 4..].to_vec();
    match length {
        Some(n) => {
            while content.len() < n {
                let got = read_some(&mut s, &mut chunk)?;
                if got == 0 {
                    return Err("the connection closed in the response body".into());
                }
                content.extend_from_slice(&chunk[..got]);
            }
            content.truncate(n);
        }
        None => {
            s.read_to_end(&mut content).map_err(|e| e.to_string())?;
            if head.contains("transfer-encoding: chunked") {
                content = dechunk(&content);
            }
        }
    }
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let value = if content.is_empty() {
        Value::Null
    } else if head.contains("content-type: application/json") || extra.is_empty() {
        serde_json::from_slice(&content)
            .map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&content)))?
    } else {
        Value::String(String::from_utf8_lossy(&content).into_owned())
    };
    Ok((status, value))
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = body.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(String::from_utf8_lossy(&body[..line_end]).trim(), 16)
            .unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = line_end + 2;
        out.extend_from_slice(&body[start..(start + size).min(body.len())]);
        body = &body[(start + size + 2).min(body.len())..];
    }
    out
}

/// A WebDriver session.
struct Browser {
    port: u16,
    session: String,
}

impl Browser {
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let path = format!("/session/{}{path}", self.session);
        let (status, v) = http(self.port, method, &path, body.as_ref())
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        assert_eq!(status, 200, "{method} {path}: {v}");
        v["value"].clone()
    }

    /// Opens `url`. A browser started just before the page's server has been refused the
    /// address, under a full test run, while kalaha was listening on it; the request is
    /// made again for a few seconds before the test fails.
    fn open(&self, url: &str) {
        let path = format!("/session/{}/url", self.session);
        let body = json!({ "url": url });
        let start = Instant::now();
        loop {
            let (status, v) = http(self.port, "POST", &path, Some(&body))
                .unwrap_or_else(|e| panic!("POST {path}: {e}"));
            let refused = v.to_string().contains("ERR_CONNECTION_REFUSED");
            if status == 200 || !refused || start.elapsed() > Duration::from_secs(10) {
                assert_eq!(status, 200, "POST {path}: {v}");
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn run(&self, script: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(json!({ "script": script, "args": [] })),
        )
    }

    fn find(&self, css: &str) -> String {
        let v = self.call(
            "POST",
            "/element",
            Some(json!({ "using": "css selector", "value": css })),
        );
        v[ELEMENT].as_str().expect("an element").to_string()
    }

    fn click(&self, css: &str) {
        let id = self.find(css);
        // A click on a disabled button may be refused by the driver or swallowed by the
        // browser: either way it must not move.
        let path = format!("/session/{}/element/{id}/click", self.session);
        let _ = http(self.port, "POST", &path, Some(&json!({})));
    }

    fn keys(&self, text: &str) {
        let body = self.find("body");
        self.call(
            "POST",
            &format!("/element/{body}/value"),
            Some(json!({ "text": text })),
        );
    }

    fn screenshot(&self, width: u32, file: &Path) {
        self.screenshot_of(width, None, file);
    }

    /// A screenshot at `width` with the element `css` (if given) scrolled to the top.
    fn screenshot_of(&self, width: u32, css: Option<&str>, file: &Path) {
        self.call(
            "POST",
            "/window/rect",
            Some(json!({ "width": width, "height": 1000 })),
        );
        std::thread::sleep(Duration::from_millis(300));
        if let Some(css) = css {
            self.run(&format!(
                "document.querySelector({}).scrollIntoView();",
                json!(css)
            ));
            std::thread::sleep(Duration::from_millis(100));
        }
        let png = self.call("GET", "/screenshot", None);
        std::fs::write(file, base64(png.as_str().unwrap())).unwrap();
    }
}

fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for v in text.bytes().filter_map(value) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// What the page shows of the person's game.
#[derive(Debug)]
struct Seen {
    result: Option<String>,
    game: String,
    plies: i64,
    enabled: Vec<u64>,
    disabled: Vec<u64>,
}

const READ_PAGE: &str = "
    const r = document.getElementById('result');
    const b = document.querySelector('#board-area .board');
    const pits = [...document.querySelectorAll('button[data-pit]')];
    return {
      result: r ? r.textContent : null,
      game: b ? b.dataset.game : '',
      plies: b ? Number(b.dataset.plies) : -1,
      enabled: pits.filter((p) => !p.disabled).map((p) => Number(p.dataset.pit)),
      disabled: pits.filter((p) => p.disabled).map((p) => Number(p.dataset.pit)),
    };";

fn seen(b: &Browser) -> Seen {
    let v = b.run(READ_PAGE);
    let pits = |k: &str| {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_u64().unwrap())
            .collect()
    };
    Seen {
        result: v["result"].as_str().map(str::to_string),
        game: v["game"].as_str().unwrap_or("").to_string(),
        plies: v["plies"].as_i64().unwrap(),
        enabled: pits("enabled"),
        disabled: pits("disabled"),
    }
}

/// Polls the page until `done` holds, for at most `limit`.
fn wait_for(b: &Browser, limit: Duration, what: &str, done: impl Fn(&Seen) -> bool) -> Seen {
    let start = Instant::now();
    loop {
        let s = seen(b);
        if done(&s) {
            return s;
        }
        assert!(
            start.elapsed() < limit,
            "timed out waiting for {what}: {s:?}"
        );
        std::thread::sleep(Duration::from_millis(15));
    }
}

/// A page served by kalaha: its port and its token.
#[derive(Clone, Debug)]
struct Page {
    port: u16,
    token: String,
}

impl Page {
    /// The address kalaha printed.
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/?token={}", self.port, self.token)
    }

    /// A request as the page's script makes it: with its token (and, for a `POST`, its
    /// origin and `X-Kalaha`).
    fn call(&self, method: &str, path: &str) -> (u16, Value) {
        let extra = format!(
            "X-Kalaha-Token: {}\r\nOrigin: http://127.0.0.1:{}\r\nX-Kalaha: 1\r\n",
            self.token, self.port
        );
        http_with(self.port, method, path, None, &extra).unwrap()
    }

    /// The same request without the token: what any other program can send.
    fn call_without_token(&self, method: &str, path: &str) -> (u16, Value) {
        let extra = format!("Origin: http://127.0.0.1:{}\r\nX-Kalaha: 1\r\n", self.port);
        http_with(self.port, method, path, None, &extra).unwrap()
    }

    fn state(&self) -> Value {
        let (status, v) = self.call("GET", "/state");
        assert_eq!(status, 200, "{v}");
        v
    }
}

/// The state of the play server, as the page reads it.
fn server_state(page: &Page) -> Value {
    page.state()
}

/// `n` of a replay note "Sowing k of n · ...".
fn first_plies_of(note: &Value) -> usize {
    let text = note.as_str().unwrap();
    let of = text.split(" of ").nth(1).unwrap();
    of.split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Chromium and chromedriver, or `None` (and a line saying `test` is skipped) where they
/// are missing; under CI their absence fails the test.
fn chromium_for(test: &str) -> Option<(PathBuf, PathBuf)> {
    let chromium = find_program("KALAHA_CHROMIUM", &["chromium", "chromium-browser"]);
    let driver = find_program(
        "KALAHA_CHROMEDRIVER",
        &["/usr/bin/chromedriver", "chromedriver"],
    );
    let (Some(chromium), Some(driver)) = (chromium, driver) else {
        let why = "chromium and chromedriver are needed (apt-get install chromium chromium-driver)";
        if std::env::var_os("CI").is_some() {
            panic!("{why}");
        }
        eprintln!("skipping {test}: {why}");
        return None;
    };
    Some((chromium, driver))
}

#[test]
fn a_person_plays_random_in_chromium() {
    let started = Instant::now();
    let Some((chromium, driver)) = chromium_for("a_person_plays_random_in_chromium") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let out_arg = out.display().to_string();
    // Without the pause before the engine's reply, so the timings measure the server.
    let (play, play_page, lines) = serving(&[
        "play", "--engine", "random", "--pace", "0s", "--out", &out_arg,
    ]);
    let url = play_page.url();
    let (_driver, browser) = open_browser(&chromium, &driver, &tmp.path().join("profile"));
    browser.open(&url);
    // Drawn at once, not seed by seed: the timings measure the server and the page.
    let animated = browser.run(
        "const a = document.getElementById('animate'); if (a.checked) a.click(); return a.checked;",
    );
    assert_eq!(animated, false);
    let title = browser.run("return document.title;");
    assert_eq!(title, "kalaha: human against random");
    // Nothing on the page comes from elsewhere.
    let external = browser
        .run("return [...document.querySelectorAll('[src],[href]')].map((e) => e.src || e.href);");
    assert_eq!(external, json!([]), "the page loads other resources");

    // Issue 32: the first player's advantage is on the page, with the value of Kalah(6,4).
    let advantage = browser.run("return document.getElementById('advantage').textContent;");
    assert_eq!(
        advantage,
        "Moving first is an advantage on this board (6 pits, 4 seeds each): with perfect play \
         by both, south, who moves first, ends 8 seeds ahead (+8)."
    );
    let (game1, result, clicks) = play_a_whole_game(&browser, &play_page);
    let screenshots = std::env::var_os("KALAHA_SCREENSHOTS").map(PathBuf::from);
    if let Some(dir) = &screenshots {
        std::fs::create_dir_all(dir).unwrap();
        browser.screenshot(400, &dir.join("result-400.png"));
        browser.screenshot(1200, &dir.join("result-1200.png"));
    }
    replay_with_the_keyboard(&browser, &game1, screenshots.as_deref());
    print_the_timings(&browser);
    next_game_by_key(&browser, &play_page, &game1, screenshots.as_deref());
    browser.call("DELETE", "", None);
    stop_with_ctrl_c(play, &lines, &out);
    let sowings = check_the_record(&out, &game1, &result, clicks);
    eprintln!(
        "a whole game of {sowings} sowings ({clicks} clicks) in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Issue 32: a system that asks for reduced motion (`prefers-reduced-motion: reduce`,
/// emulated through the DevTools protocol) gets its sowings drawn at once; the setting
/// "Sow seed by seed" overrides it and is kept for the address; without the request the
/// setting is on.
#[test]
fn reduced_motion_draws_sowings_at_once_in_chromium() {
    let Some((chromium, driver)) = chromium_for("reduced_motion_draws_sowings_at_once_in_chromium")
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let out_arg = out.display().to_string();
    let (play, page, lines) = serving(&[
        "play", "--engine", "random", "--pace", "0s", "--out", &out_arg,
    ]);
    let (_driver, browser) = open_browser(&chromium, &driver, &tmp.path().join("profile"));
    let motion = |value: &str| {
        browser.call(
            "POST",
            "/goog/cdp/execute",
            Some(json!({ "cmd": "Emulation.setEmulatedMedia", "params": {
                "features": [{ "name": "prefers-reduced-motion", "value": value }] } })),
        );
    };
    motion("reduce");
    browser.open(&page.url());
    assert_eq!(
        browser.run("return matchMedia('(prefers-reduced-motion: reduce)').matches;"),
        true,
        "the emulation did not take"
    );
    assert_eq!(
        browser.run("return document.getElementById('animate').checked;"),
        false
    );
    let s = wait_for(&browser, Duration::from_secs(20), "the first move", |s| {
        !s.enabled.is_empty()
    });
    browser.click(&format!("button[data-pit=\"{}\"]", s.enabled[0]));
    // The sowing and the engine's reply are shown, and no board was ever drawn seed by seed.
    let start = Instant::now();
    loop {
        let v = browser.run(
            "const b = document.querySelector('#board-area .board'); \
             return [b.dataset.animating === '1', Number(b.dataset.plies)];",
        );
        assert_eq!(v[0], false, "a sowing was drawn seed by seed");
        if v[1].as_u64().unwrap() >= 2 {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "no reply: {v}");
        std::thread::sleep(Duration::from_millis(5));
    }
    // The setting, once chosen, wins over the system's wish and is kept.
    browser.click("#animate");
    browser.call("POST", "/refresh", Some(json!({})));
    assert_eq!(
        browser.run("return document.getElementById('animate').checked;"),
        true
    );
    // Without the wish, and nothing chosen, sowings are drawn seed by seed.
    motion("no-preference");
    browser.run("localStorage.clear();");
    browser.call("POST", "/refresh", Some(json!({})));
    assert_eq!(
        browser.run("return document.getElementById('animate').checked;"),
        true
    );
    motion("reduce");
    browser.run("localStorage.clear();");
    browser.call("POST", "/refresh", Some(json!({})));
    assert_eq!(
        browser.run("return document.getElementById('animate').checked;"),
        false
    );
    browser.call("DELETE", "", None);
    // SAFETY: signals our own child.
    unsafe { libc::kill(play.0.id() as i32, libc::SIGINT) };
    let mut play = play;
    assert!(play.0.wait().unwrap().success());
    assert!(
        the_rest(&lines).contains(&"no game was played: no results were kept".to_string()),
        "a game in progress is not kept"
    );
}

/// Starts chromedriver and a headless Chromium session with its profile in `profile`.
fn open_browser(chromium: &Path, driver: &Path, profile: &Path) -> (Reaped, Browser) {
    let driver_port = free_port();
    let driver_process = Reaped(
        Command::new(driver)
            .arg(format!("--port={driver_port}"))
            .env("SE_AVOID_STATS", "true")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver"),
    );
    let ready = Instant::now();
    while !http(driver_port, "GET", "/status", None).is_ok_and(|(_, v)| v["value"]["ready"] == true)
    {
        assert!(
            ready.elapsed() < Duration::from_secs(20),
            "chromedriver did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut args: Vec<String> = CHROMIUM_FLAGS.iter().map(|f| f.to_string()).collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    let caps = json!({ "capabilities": { "alwaysMatch": {
        "browserName": "chrome",
        "goog:chromeOptions": { "binary": chromium.display().to_string(), "args": args }
    }}});
    let (status, v) = http(driver_port, "POST", "/session", Some(&caps)).unwrap();
    assert_eq!(status, 200, "no WebDriver session: {v}");
    let browser = Browser {
        port: driver_port,
        session: v["value"]["sessionId"].as_str().unwrap().to_string(),
    };
    (driver_process, browser)
}

/// Game 1: the person is south and moves first, clicking random enabled pits (and, a few
/// times, a disabled one, which must not move). Returns the game, the result shown and the
/// number of clicks.
fn play_a_whole_game(browser: &Browser, play_page: &Page) -> (String, String, usize) {
    let first = wait_for(browser, Duration::from_secs(20), "the first move", |s| {
        !s.enabled.is_empty()
    });
    let game1 = first.game.clone();
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut clicks = 0;
    let mut disabled_checked = 0;
    let result = loop {
        let s = wait_for(browser, Duration::from_secs(20), "the person's turn", |s| {
            s.result.is_some() || !s.enabled.is_empty()
        });
        if let Some(r) = s.result {
            break r;
        }
        if let Some(&pit) = s.disabled.first()
            && disabled_checked < 3
        {
            // A disabled (empty) pit does not move.
            browser.click(&format!("button[data-pit=\"{pit}\"]"));
            std::thread::sleep(Duration::from_millis(100));
            let after = seen(browser);
            assert_eq!(after.plies, s.plies, "a disabled pit moved");
            let state = server_state(play_page);
            assert_eq!(
                state["boards"][0]["frames"].as_array().unwrap().len() as i64,
                s.plies
            );
            assert_eq!(state["boards"][0]["awaiting"], true);
            disabled_checked += 1;
        }
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let pit = s.enabled[(rng % s.enabled.len() as u64) as usize];
        browser.click(&format!("button[data-pit=\"{pit}\"]"));
        clicks += 1;
        wait_for(browser, Duration::from_secs(20), "the sowing", |n| {
            n.plies > s.plies || n.result.is_some()
        });
    };
    assert!(disabled_checked > 0, "no pit was ever disabled");
    (game1, result, clicks)
}

/// The finished game replays move by move, with the keyboard too.
fn replay_with_the_keyboard(browser: &Browser, game1: &str, screenshots: Option<&Path>) {
    browser.click(&format!("#games button[data-game=\"{game1}\"]"));
    let note = |b: &Browser| b.run("return document.getElementById('replay-note').textContent;");
    let replay_start = Instant::now();
    while note(browser) == "" {
        assert!(
            replay_start.elapsed() < Duration::from_secs(10),
            "no replay"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Issue 32: it opens at the start, with the focus on "next", the control that can act.
    assert_eq!(note(browser), "The start position.");
    let plies = browser.run("return document.querySelector('#replay-board .board').dataset.plies;");
    assert_eq!(plies, "0");
    assert_eq!(
        browser.run("return document.activeElement.id;"),
        "r-next",
        "the focus after opening a replay"
    );
    let n: usize = browser
        .run("return document.getElementById('r-range').max;")
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    browser.keys("\u{E010}"); // End
    assert!(
        note(browser)
            .as_str()
            .unwrap()
            .starts_with(&format!("Sowing {n} of {n}"))
    );
    assert_eq!(first_plies_of(&note(browser)), n);
    browser.keys("\u{E012}"); // ArrowLeft
    let back = note(browser);
    assert!(
        back.as_str()
            .unwrap()
            .starts_with(&format!("Sowing {} of {n}", n - 1)),
        "{back}"
    );
    browser.keys("\u{E011}"); // Home
    assert_eq!(note(browser), "The start position.");
    browser.keys("\u{E014}"); // ArrowRight
    if let Some(dir) = screenshots {
        browser.screenshot(1200, &dir.join("replay-1200.png"));
    }
    browser.call(
        "POST",
        "/execute/sync",
        Some(json!({
            "script": "document.getElementById('r-close').click(); window.scrollTo(0, 0);",
            "args": []
        })),
    );
}

/// Prints the time from a click to the engine's reply shown on the page.
fn print_the_timings(browser: &Browser) {
    let timings = browser.run("return window.kalahaTimings;");
    let mut replies: Vec<f64> = timings
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["reply"].as_f64())
        .collect();
    let own: Vec<f64> = timings
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["own"].as_f64())
        .collect();
    replies.sort_by(f64::total_cmp);
    assert!(!replies.is_empty(), "no engine reply was timed: {timings}");
    let (min, median) = (replies[0], replies[replies.len() / 2]);
    let max = replies[replies.len() - 1];
    eprintln!(
        "click to the engine's reply on the page: least {min:.1} ms, median {median:.1} ms, max \
         {max:.1} ms over {} replies; click to the own sowing shown: max {:.1} ms",
        replies.len(),
        own.iter().copied().fold(0.0, f64::max)
    );
    assert!(max < 10_000.0, "a reply took {max} ms to show");
}

/// The next game: the engine moves first, the person is north; a digit key sows.
fn next_game_by_key(browser: &Browser, play_page: &Page, game1: &str, screenshots: Option<&Path>) {
    assert!(browser.run("return document.getElementById('new-game').disabled;") == false);
    browser.keys("n");
    let s = wait_for(browser, Duration::from_secs(20), "the second game", |s| {
        s.game != game1 && !s.enabled.is_empty()
    });
    let state = server_state(play_page);
    assert_eq!(state["boards"][0]["person"], "north");
    assert_eq!(state["boards"][0]["frames"][0]["side"], "south");
    let pit = s.enabled[0];
    browser.keys(&pit.to_string());
    wait_for(browser, Duration::from_secs(20), "a sowing by key", |n| {
        n.plies > s.plies
    });
    if let Some(dir) = screenshots {
        browser.screenshot(400, &dir.join("play-400.png"));
        browser.screenshot(1200, &dir.join("play-1200.png"));
    }
}

/// Ctrl-C ends the session: the game in progress is not recorded.
fn stop_with_ctrl_c(play: Reaped, lines: &mpsc::Receiver<String>, out: &Path) {
    let pid = play.0.id() as i32;
    // SAFETY: signals our own child.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let mut play = play;
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = play.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "kalaha play did not stop on Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "kalaha play exited with {status}");
    let printed = the_rest(lines);
    assert!(
        printed
            .iter()
            .any(|l| l == &format!("1 game recorded in {}", out.display())),
        "{printed:?}"
    );
}

/// The recorded game is the one on the page; returns its number of sowings.
fn check_the_record(out: &Path, game1: &str, result: &str, clicks: usize) -> usize {
    let jsonl = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    let games: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(games.len(), 1, "{jsonl}");
    let g = &games[0];
    assert_eq!(g["game"], game1);
    assert_eq!(
        (g["south"].as_str(), g["north"].as_str()),
        (Some("human"), Some("random"))
    );
    assert_eq!(g["termination"], "normal");
    let moves = g["moves"].as_array().unwrap();
    let by_person = moves.iter().filter(|m| m["side"] == "south").count();
    assert_eq!(by_person, clicks, "every click is one sowing of the person");
    let (south, north) = (
        g["south_score"].as_u64().unwrap(),
        g["north_score"].as_u64().unwrap(),
    );
    assert!(
        result.contains(&format!("human (south) {south} – {north} random (north)")),
        "{result}"
    );
    let verdict = match south.cmp(&north) {
        std::cmp::Ordering::Greater => "human wins",
        std::cmp::Ordering::Less => "random wins",
        std::cmp::Ordering::Equal => "a draw",
    };
    assert!(result.contains(verdict), "{result}");
    let csv = std::fs::read_to_string(out.join("games.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2, "{csv}");
    assert!(
        csv.lines().nth(1).unwrap().contains(",human,random,"),
        "{csv}"
    );
    let toml = std::fs::read_to_string(out.join("tournament.toml")).unwrap();
    assert!(
        toml.contains("a person, on the page of kalaha play"),
        "{toml}"
    );
    moves.len()
}

/// The lines kalaha printed that were not yet read, up to the end of its output: call it
/// once kalaha has exited (its last lines may still be on their way from the reader thread).
fn the_rest(lines: &mpsc::Receiver<String>) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut rest = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(line) => rest.push(line),
            Err(_) => break,
        }
    }
    rest
}

/// Starts `kalaha ARGS`, waits for the address of its page, and returns the process, the
/// page (its port and token) and the rest of its output.
fn serving(args: &[&str]) -> (Reaped, Page, mpsc::Receiver<String>) {
    serving_in(Path::new("."), args)
}

/// [`serving`] with `dir` as the current folder.
fn serving_in(dir: &Path, args: &[&str]) -> (Reaped, Page, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start kalaha");
    let stdout = child.stdout.take().unwrap();
    let child = Reaped(child);
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let page = loop {
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("kalaha {args:?} printed no address"));
        if let Some(u) = line.split_whitespace().find(|w| w.starts_with("http://")) {
            let rest = u
                .strip_prefix("http://127.0.0.1:")
                .expect("a loopback address");
            let (port, token) = rest.split_once("/?token=").expect("a token in the address");
            assert_eq!(token.len(), 64, "{u}");
            assert!(token.bytes().all(|b| b.is_ascii_hexdigit()), "{u}");
            break Page {
                port: port.parse().expect("a port in the address"),
                token: token.to_string(),
            };
        }
    };
    (child, page, lines)
}

/// `kalaha tournament --live` shows the games as they are played, and `kalaha show
/// --serve` the folder they were written to, each game replayable.
#[test]
fn a_live_tournament_and_its_folder_are_served() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let out_arg = out.display().to_string();
    let (mut run, page, _lines) = serving(&[
        "tournament",
        "--live",
        "--quiet",
        "--engine",
        "builtin=hard",
        "--engine",
        "builtin=medium",
        "name=</script><b>m</b>",
        "--games",
        "2",
        "--move-time",
        "40ms",
        "--concurrency",
        "2",
        "--out",
        &out_arg,
    ]);
    // A page that follows the run from its start learns of its end.
    let mut follower = open_stream(&page, &format!("token={}&page=follower", page.token));
    let mut moves_seen = 0;
    let mut refused_seen = false;
    let start = Instant::now();
    while run.0.try_wait().unwrap().is_none() {
        if !refused_seen && let Ok((status, _)) = http(page.port, "GET", "/state", None) {
            assert_eq!(status, 403, "the live state without the token");
            refused_seen = true;
        }
        let extra = format!("X-Kalaha-Token: {}\r\n", page.token);
        if let Ok((200, state)) = http_with(page.port, "GET", "/state", None, &extra) {
            assert_eq!(state["mode"], "tournament");
            for b in state["boards"].as_array().unwrap() {
                assert!(b["south"] == "hard" || b["north"] == "hard", "{b}");
                moves_seen = moves_seen.max(b["frames"].as_array().unwrap().len());
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the run did not end"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(run.0.wait().unwrap().success());
    assert!(moves_seen > 0, "no sowing was seen on a live board");
    assert!(
        refused_seen,
        "no request without the token was made during the run"
    );
    let mut stream = String::new();
    let _ = follower.read_to_string(&mut stream);
    let last = stream
        .rsplit("event: state\ndata: ")
        .next()
        .and_then(|t| t.lines().next())
        .unwrap();
    let last: Value = serde_json::from_str(last).unwrap();
    assert_eq!(last["finished"], 2, "{last}");
    assert_eq!(last["standings"].as_array().unwrap().len(), 2, "{last}");
    let ended = last["ended"].as_str().unwrap();
    assert!(
        ended.starts_with("the run is over: 2 games played; run finished: results in "),
        "{ended}"
    );
    assert!(ended.ends_with("run"), "{ended}");

    let (mut show, page, _lines) = serving(&["show", "--serve", &out_arg]);
    // The folder's page, too, answers only its address.
    for path in ["/", "/state", "/events", "/game?id=1"] {
        let (status, _) = page.call_without_token("GET", path);
        assert_eq!(status, 403, "{path}");
    }
    let (status, state) = page.call("GET", "/state");
    assert_eq!(status, 200);
    assert_eq!(state["mode"], "results");
    assert_eq!(state["finished"], 2);
    assert_eq!(state["standings"].as_array().unwrap().len(), 2);
    let jsonl = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    let first: Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    let (status, game) = page.call("GET", &format!("/game?id={}", first["number"]));
    assert_eq!(status, 200, "{game}");
    let frames = game["frames"].as_array().unwrap();
    assert_eq!(frames.len(), first["moves"].as_array().unwrap().len());
    let last = &frames[frames.len() - 1]["position"];
    assert_eq!(last["south"], first["final_position"]["south"]);
    assert_eq!(last["north"], first["final_position"]["north"]);
    assert!(
        game["result"]["text"]
            .as_str()
            .unwrap()
            .contains("</script><b>m</b>")
    );
    let (status, _) = page.call("GET", "/game?id=nope");
    assert_eq!(status, 404);
    // SAFETY: signals our own child.
    unsafe { libc::kill(show.0.id() as i32, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(20);
    while show.0.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "kalaha show --serve did not stop on Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(show.0.wait().unwrap().success());
}

/// Waits until the person is to move in the first game; returns the state.
fn the_person_to_move(page: &Page) -> Value {
    let start = Instant::now();
    loop {
        let state = page.state();
        if state["boards"][0]["awaiting"] == true {
            return state;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the person was never to move: {state}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Issue 25, point 4: a program on the same machine that found the port (in
/// `/proc/net/tcp`, say) and copied the page's headers (`Origin`, `X-Kalaha`) reads no
/// state and makes no move; the holder of the token does both.
#[test]
fn another_program_cannot_move_for_the_person() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let out_arg = out.display().to_string();
    let (play, page, lines) = serving(&["play", "--engine", "random", "--out", &out_arg]);
    let state = the_person_to_move(&page);
    let game = state["boards"][0]["game"].as_str().unwrap().to_string();
    let pit = state["boards"][0]["legal"][0].as_u64().unwrap();
    let sow = format!("/move?game={game}&pit={pit}");
    for (method, path) in [
        ("GET", "/state"),
        ("GET", "/"),
        ("GET", "/events"),
        ("GET", &format!("/game?id={game}")),
        ("POST", &sow),
        ("POST", "/new"),
    ] {
        let (status, body) = page.call_without_token(method, path);
        assert_eq!(status, 403, "{method} {path}: {body}");
        assert!(!body.to_string().contains(&game), "{body}");
    }
    // A guessed token is no better.
    let wrong = format!(
        "X-Kalaha-Token: {}\r\nOrigin: http://127.0.0.1:{}\r\nX-Kalaha: 1\r\n",
        "0".repeat(64),
        page.port
    );
    let (status, _) = http_with(page.port, "POST", &sow, None, &wrong).unwrap();
    assert_eq!(status, 403);
    let (status, _) = page.call_without_token("POST", &format!("{sow}&token={}", "f".repeat(64)));
    assert_eq!(status, 403);
    // Nothing moved.
    let after = page.state();
    assert_eq!(after["boards"][0]["game"], game.as_str());
    assert_eq!(after["boards"][0]["frames"], json!([]), "{after}");
    assert_eq!(after["boards"][0]["awaiting"], true);
    // With the token, the move is made.
    let (status, body) = page.call("POST", &sow);
    assert_eq!(status, 200, "{body}");
    let start = Instant::now();
    let moved = loop {
        let s = page.state();
        // The person's sowing and the engine's reply (pit 1 gives no extra turn).
        if s["boards"][0]["frames"].as_array().unwrap().len() >= 2 {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the move was not played: {s}"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(moved["boards"][0]["frames"][0]["pit"], pit, "{moved}");
    assert_eq!(moved["boards"][0]["frames"][0]["side"], "south");
    // Issue 32: the engine's reply comes after a pause (400 ms by default against a person),
    // so the person's own sowing is seen first.
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_millis(350),
        "the reply came after {waited:?}"
    );
    assert_eq!(moved["boards"][0]["frames"][1]["side"], "north");
    // SAFETY: signals our own child.
    unsafe { libc::kill(play.0.id() as i32, libc::SIGINT) };
    let mut play = play;
    assert!(play.0.wait().unwrap().success());
    let printed = the_rest(&lines);
    // Issue 32: a session without a game keeps no folder.
    assert!(
        printed
            .iter()
            .any(|l| l == "no game was played: no results were kept"),
        "{printed:?}"
    );
    assert!(!out.exists(), "{} was kept", out.display());
}

/// protocol.md's session holds in `kalaha play` too: the engine gets the set-up ping, a
/// ping before each of its games and one after each `new_game` (here three games, each
/// left with "New game", which resigns it, and a fourth in progress at Ctrl-C).
#[test]
fn the_engine_of_a_session_is_pinged_before_every_game() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let out_arg = out.display().to_string();
    let (play, page, _lines) = serving(&[
        "play", "--engine", "random", "--pace", "0s", "--debug", "--out", &out_arg,
    ]);
    let mut ids = Vec::new();
    for _ in 0..3 {
        let state = the_person_to_move(&page);
        ids.push(state["boards"][0]["game"].as_str().unwrap().to_string());
        let (status, body) = page.call("POST", "/new");
        assert_eq!(status, 200, "{body}");
        // The next game is shown once it has started.
        let start = Instant::now();
        while page.state()["boards"][0]["game"] == ids.last().unwrap().as_str() {
            assert!(start.elapsed() < Duration::from_secs(30), "no next game");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    the_person_to_move(&page);
    // SAFETY: signals our own child.
    unsafe { libc::kill(play.0.id() as i32, libc::SIGINT) };
    let mut play = play;
    assert!(play.0.wait().unwrap().success());
    let games = std::fs::read_to_string(out.join("games.csv")).unwrap();
    assert_eq!(games.lines().count(), 4, "{games}");
    assert_eq!(games.matches(",resigned,").count(), 3, "{games}");
    // The one instance of random: what the referee sent it, in order.
    let transcripts: Vec<PathBuf> = std::fs::read_dir(out.join("logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "transcript"))
        .collect();
    assert_eq!(transcripts.len(), 1, "{transcripts:?}");
    let transcript = std::fs::read_to_string(&transcripts[0]).unwrap();
    let sent: Vec<String> = transcript
        .lines()
        .filter_map(|l| l.split_once(" > "))
        .filter_map(|(_, m)| serde_json::from_str::<Value>(m).ok())
        .map(|m| match m["type"].as_str().unwrap() {
            "ping" => format!("ping {}", m["id"]),
            other => other.to_string(),
        })
        .filter(|m| m != "go" && m != "option")
        .collect();
    let mut expected = vec!["hello".to_string(), "ping 1".to_string()];
    for g in 0..4 {
        expected.push(format!("ping {}", 2 + 2 * g));
        expected.push("new_game".into());
        expected.push(format!("ping {}", 3 + 2 * g));
        if g < 3 {
            expected.push("game_over".into());
        }
    }
    expected.push("quit".into());
    assert_eq!(sent, expected, "{transcript}");
}

/// Opens `GET /events?QUERY` on `page`'s port, not yet read.
fn open_stream(page: &Page, query: &str) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", page.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "GET /events?{query} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
        page.port
    )
    .unwrap();
    s
}

/// Reads `s` until `needle` has been seen; false if the stream ended first.
fn read_until(s: &mut TcpStream, needle: &str, seen: &mut String) -> bool {
    let mut buf = [0u8; 16384];
    while !seen.contains(needle) {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => seen.push_str(&String::from_utf8_lossy(&buf[..n])),
        }
    }
    true
}

/// Issue 25, point 5: 64 idle event streams (with the token, as many tabs would hold), 64
/// connections that never send a request and 64 streams asked for without the token do
/// not keep the page from loading nor its updates from coming.
#[test]
fn idle_streams_do_not_starve_the_play_page() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let out_arg = out.display().to_string();
    let (play, page, _lines) = serving(&["play", "--engine", "random", "--out", &out_arg]);
    let state = the_person_to_move(&page);
    let mut idle = Vec::new();
    for i in 0..64 {
        let mut s = open_stream(&page, &format!("token={}&page=tab{i}", page.token));
        let mut seen = String::new();
        assert!(
            read_until(&mut s, "event: state", &mut seen),
            "idle stream {i}: {seen}"
        );
        idle.push(s);
    }
    let mut refused = Vec::new();
    for _ in 0..64 {
        let mut s = open_stream(&page, "page=intruder");
        let mut seen = String::new();
        read_until(&mut s, "\r\n", &mut seen);
        assert!(seen.starts_with("HTTP/1.1 403"), "{seen}");
        refused.push(s);
    }
    let silent: Vec<TcpStream> = (0..64)
        .map(|_| TcpStream::connect(("127.0.0.1", page.port)).unwrap())
        .collect();
    let started = Instant::now();
    let (status, html) = http_with(
        page.port,
        "GET",
        &format!("/?token={}", page.token),
        None,
        "Accept: text/html\r\n",
    )
    .unwrap();
    assert_eq!(status, 200);
    assert!(html.as_str().unwrap().contains("initial-state"));
    let mut mine = open_stream(&page, &format!("token={}&page=mine", page.token));
    let mut seen = String::new();
    assert!(read_until(&mut mine, "event: state", &mut seen), "{seen}");
    assert!(seen.starts_with("HTTP/1.1 200 OK"), "{seen}");
    // An update: the person's move, then the engine's reply.
    let game = state["boards"][0]["game"].as_str().unwrap();
    let pit = state["boards"][0]["legal"][0].as_u64().unwrap();
    let (status, body) = page.call("POST", &format!("/move?game={game}&pit={pit}"));
    assert_eq!(status, 200, "{body}");
    assert!(
        read_until(
            &mut mine,
            &format!("\"frames\":[{{\"side\":\"south\",\"pit\":{pit}"),
            &mut seen
        ),
        "{seen}"
    );
    let took = started.elapsed();
    eprintln!("with 192 idle clients, the page and its first update took {took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    drop((idle, refused, silent));
    // SAFETY: signals our own child.
    unsafe { libc::kill(play.0.id() as i32, libc::SIGINT) };
    let mut play = play;
    assert!(play.0.wait().unwrap().success());
}

/// Issue 32, point 1: the live page of a tournament shows its end (the final standings,
/// "run finished: results in DIR") and stays readable once the server is gone.
#[test]
fn the_live_page_shows_the_end_of_the_run_in_chromium() {
    let Some((chromium, driver)) =
        chromium_for("the_live_page_shows_the_end_of_the_run_in_chromium")
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let out_arg = out.display().to_string();
    // The browser first: the run is short.
    let (_driver, browser) = open_browser(&chromium, &driver, &tmp.path().join("profile"));
    let (mut run, page, _lines) = serving(&[
        "tournament",
        "--live",
        "--quiet",
        "--engine",
        "builtin=hard",
        "--engine",
        "builtin=medium",
        "--games",
        "24",
        "--move-time",
        "30ms",
        "--concurrency",
        "1",
        "--out",
        &out_arg,
    ]);
    browser.open(&page.url());
    // The page follows the run: its count of games grows while the run goes on.
    let games = "return document.querySelectorAll('#games tbody tr').length;";
    let first = browser.run(games).as_u64().unwrap();
    let start = Instant::now();
    while browser.run(games).as_u64().unwrap() <= first {
        assert!(
            run.0.try_wait().unwrap().is_none(),
            "the run ended before the page saw a game (the test needs a longer run)"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the page saw no game"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    while run.0.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "the run did not end"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(run.0.wait().unwrap().success());
    let read = "return { status: document.getElementById('status').textContent, \
                problem: document.getElementById('problem').textContent, \
                title: document.title, \
                heading: document.getElementById('title').textContent, \
                verdict: document.getElementById('verdict').hidden, \
                rows: document.querySelectorAll('#standings tbody tr').length, \
                games: document.querySelectorAll('#games tbody tr').length };";
    let start = Instant::now();
    let seen = loop {
        let v = browser.run(read);
        if v["status"].as_str().unwrap().contains("stopped serving") {
            break v;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the page never saw the end: {v}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let status = seen["status"].as_str().unwrap();
    assert!(
        status.starts_with("24 of 24 games recorded · the run is over: 24 games played"),
        "{status}"
    );
    assert!(
        status.contains(&format!("run finished: results in {}", out.display())),
        "{status}"
    );
    assert_eq!(seen["problem"], "", "{seen}");
    assert_eq!(seen["rows"], 2, "{seen}");
    assert_eq!(seen["games"], 24, "{seen}");
    // Titled by the kind of run, how many play and where; a tournament has no verdict.
    let title = format!("kalaha: Tournament of 2 engines ({})", out.display());
    assert_eq!(seen["title"], title.as_str(), "{seen}");
    assert_eq!(seen["heading"], title.as_str(), "{seen}");
    assert_eq!(seen["verdict"], true, "{seen}");
    // It stays so: no retrying.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(browser.run(read), seen);
    if let Some(dir) = std::env::var_os("KALAHA_SCREENSHOTS").map(PathBuf::from) {
        std::fs::create_dir_all(&dir).unwrap();
        browser.screenshot(390, &dir.join("live-end-390.png"));
        browser.screenshot(1280, &dir.join("live-end-1280.png"));
    }
    browser.call("DELETE", "", None);
}

/// The live page of an SPRT is titled by the test and its engines, and shows at its end
/// the verdict the terminal prints (H1 accepted, with the LLR and its bound).
#[test]
fn the_live_page_of_an_sprt_shows_its_verdict_in_chromium() {
    let Some((chromium, driver)) =
        chromium_for("the_live_page_of_an_sprt_shows_its_verdict_in_chromium")
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sprt");
    let out_arg = out.display().to_string();
    let (_driver, browser) = open_browser(&chromium, &driver, &tmp.path().join("profile"));
    // Far apart: hard wins every pair and H1 is accepted after some 17 pairs.
    let (mut run, page, lines) = serving(&[
        "sprt",
        "--live",
        "--quiet",
        "--engine",
        "builtin=hard",
        "--engine",
        "builtin=random",
        "--elo0",
        "0",
        "--elo1",
        "50",
        "--move-time",
        "100ms",
        "--concurrency",
        "1",
        "--out",
        &out_arg,
    ]);
    browser.open(&page.url());
    let read = "return { status: document.getElementById('status').textContent, \
                title: document.title, \
                heading: document.getElementById('title').textContent, \
                hidden: document.getElementById('verdict').hidden, \
                verdict: document.getElementById('verdict').textContent };";
    // The page follows the test before it decides.
    let start = Instant::now();
    loop {
        let v = browser.run(read);
        if v["status"].as_str().unwrap().contains("games recorded") {
            assert_eq!(v["hidden"], true, "no verdict before the end: {v}");
            break;
        }
        assert!(
            run.0.try_wait().unwrap().is_none(),
            "the test ended before the page followed it (it needs a longer run)"
        );
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the page never loaded: {v}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let seen = loop {
        let v = browser.run(read);
        if v["status"].as_str().unwrap().contains("stopped serving") {
            break v;
        }
        assert!(
            start.elapsed() < Duration::from_secs(40),
            "the page never saw the end: {v}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(run.0.wait().unwrap().success());
    assert_eq!(seen["title"], "kalaha: SPRT hard against random", "{seen}");
    assert_eq!(seen["heading"], seen["title"], "{seen}");
    assert!(
        seen["status"]
            .as_str()
            .unwrap()
            .contains("the run is over, the test decided"),
        "{seen}"
    );
    assert_eq!(seen["hidden"], false, "{seen}");
    // The terminal's verdict line, word for word.
    let printed: Vec<String> = lines.try_iter().collect();
    let line = printed
        .iter()
        .find(|l| l.starts_with("H1 accepted: "))
        .unwrap_or_else(|| panic!("no verdict printed: {printed:?}"));
    assert!(
        line.starts_with("H1 accepted: hard (new) is stronger than random (base) (LLR "),
        "{line}"
    );
    assert_eq!(
        seen["verdict"],
        format!("Verdict: {line}").as_str(),
        "{seen}"
    );
    let saved = std::fs::read_to_string(out.join("sprt-result.toml")).unwrap();
    assert!(saved.contains("H1 accepted"), "{saved}");
    if let Some(dir) = std::env::var_os("KALAHA_SCREENSHOTS").map(PathBuf::from) {
        std::fs::create_dir_all(&dir).unwrap();
        browser.screenshot(1280, &dir.join("live-sprt-1280.png"));
    }
    browser.call("DELETE", "", None);
}

/// Issue 32, point 2: the person resigns a game, and leaves the next one in its middle
/// with "New game"; both are recorded as resignations, losses of the person, and rated.
#[test]
fn a_person_resigns_and_starts_again_in_chromium() {
    let Some((chromium, driver)) = chromium_for("a_person_resigns_and_starts_again_in_chromium")
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let out_arg = out.display().to_string();
    let (play, page, lines) = serving(&["play", "--engine", "random", "--out", &out_arg]);
    let (_driver, browser) = open_browser(&chromium, &driver, &tmp.path().join("profile"));
    browser.open(&page.url());
    let s = wait_for(&browser, Duration::from_secs(20), "the first move", |s| {
        !s.enabled.is_empty()
    });
    let game1 = s.game.clone();
    // Issue 32: the sowing is drawn seed by seed (the setting is on by default).
    assert_eq!(
        browser.run("return document.getElementById('animate').checked;"),
        true
    );
    browser.click(&format!("button[data-pit=\"{}\"]", s.enabled[0]));
    let sample = "const b = document.querySelector('#board-area .board'); \
                  if (!b || b.dataset.animating !== '1') return null; \
                  return [...b.querySelectorAll('.seeds')].map((e) => Number(e.textContent));";
    let mut steps: Vec<Value> = Vec::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        let v = browser.run(sample);
        if v.is_null() {
            if !steps.is_empty() {
                break;
            }
        } else if steps.last() != Some(&v) {
            steps.push(v);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        steps.len() >= 3,
        "the sowing was not drawn seed by seed: {steps:?}"
    );
    // Seeds leave the sown pit at once and land one at a time: the board's total grows by
    // one seed from step to step, up to the 48 of the game.
    let totals: Vec<u64> = steps
        .iter()
        .map(|step| {
            step.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .sum()
        })
        .collect();
    assert!(totals.iter().all(|&t| t <= 48), "{totals:?}");
    let one_by_one = totals.windows(2).filter(|w| w[1] == w[0] + 1).count();
    assert!(one_by_one >= 2, "{totals:?}");
    assert!(totals.contains(&48), "{totals:?}");
    wait_for(&browser, Duration::from_secs(20), "the sowing", |n| {
        n.plies > s.plies
    });
    let resign = "return { hidden: document.getElementById('resign').hidden, \
                  disabled: document.getElementById('resign').disabled, \
                  newgame: document.getElementById('new-game').textContent };";
    let controls = browser.run(resign);
    assert_eq!(controls["hidden"], false, "{controls}");
    browser.click("#resign");
    let done = wait_for(&browser, Duration::from_secs(20), "the resignation", |s| {
        s.result.is_some()
    });
    let result = done.result.unwrap();
    assert!(
        result.contains("random wins (human resigned). You lose."),
        "{result}"
    );
    assert_eq!(browser.run(resign)["hidden"], true);
    if let Some(dir) = std::env::var_os("KALAHA_SCREENSHOTS").map(PathBuf::from) {
        std::fs::create_dir_all(&dir).unwrap();
        browser.screenshot(390, &dir.join("resigned-390.png"));
        browser.screenshot(1280, &dir.join("resigned-1280.png"));
    }
    // The next game: the engine moves first; in its middle, "New game" resigns it.
    browser.click("#new-game");
    let s = wait_for(&browser, Duration::from_secs(20), "the second game", |s| {
        s.game != game1 && !s.enabled.is_empty()
    });
    let game2 = s.game.clone();
    let controls = browser.run(resign);
    assert!(
        controls["newgame"]
            .as_str()
            .unwrap()
            .ends_with(": resigns this one"),
        "{controls}"
    );
    assert_eq!(controls["disabled"], false, "{controls}");
    browser.click("#new-game");
    wait_for(&browser, Duration::from_secs(20), "the third game", |s| {
        s.game != game2 && s.game != game1 && !s.game.is_empty()
    });
    let state = page.state();
    assert_eq!(state["recent"][0]["termination"], "resigned", "{state}");
    browser.call("DELETE", "", None);
    // SAFETY: signals our own child.
    unsafe { libc::kill(play.0.id() as i32, libc::SIGINT) };
    let mut play = play;
    assert!(play.0.wait().unwrap().success());
    let printed = the_rest(&lines);
    assert!(
        printed
            .iter()
            .any(|l| l == &format!("2 games recorded in {}", out.display())),
        "{printed:?}"
    );
    let jsonl = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    let games: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(games.len(), 2, "{jsonl}");
    for (g, (id, person)) in games.iter().zip([(&game1, "south"), (&game2, "north")]) {
        assert_eq!(&g["game"], id.as_str());
        assert_eq!(g["termination"], "resigned", "{g}");
        assert_eq!(g["loser"], person, "{g}");
        assert_eq!(g["detail"], "human resigned", "{g}");
        let won = if person == "south" { "0-1" } else { "1-0" };
        assert_eq!(g["result"], won, "{g}");
    }
    let csv = std::fs::read_to_string(out.join("games.csv")).unwrap();
    assert_eq!(
        csv.lines().filter(|l| l.contains(",resigned,")).count(),
        2,
        "{csv}"
    );
    // Rated as losses of the person, with no fault.
    let ratings = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args([
            "ratings",
            &out_arg,
            "--out",
            &tmp.path().join("board").display().to_string(),
        ])
        .output()
        .unwrap();
    assert!(ratings.status.success(), "{ratings:?}");
    let standings = std::fs::read_to_string(tmp.path().join("board/standings.csv")).unwrap();
    let header: Vec<&str> = standings.lines().next().unwrap().split(',').collect();
    let human: Vec<&str> = standings
        .lines()
        .find(|l| l.contains(",human,"))
        .unwrap()
        .split(',')
        .collect();
    let col = |name: &str| human[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(
        (col("games"), col("wins"), col("losses")),
        ("2", "0", "2"),
        "{standings}"
    );
    for fault in [
        "timeouts",
        "illegal_moves",
        "protocol_errors",
        "crashes",
        "stalls",
    ] {
        assert_eq!(col(fault), "0", "{fault}: {standings}");
    }
}

/// Issue 32, point 5: a session in which no game was played leaves no folder (neither
/// `results/play-...` nor a `results` made for it); the page's title says who plays.
#[test]
fn a_session_without_a_game_keeps_nothing_and_the_title_names_the_players() {
    let tmp = tempfile::tempdir().unwrap();
    let stop = |play: Reaped| {
        // SAFETY: signals our own child.
        unsafe { libc::kill(play.0.id() as i32, libc::SIGINT) };
        let mut play = play;
        assert!(play.0.wait().unwrap().success());
    };
    let (play, page, lines) = serving_in(tmp.path(), &["play", "--engine", "random"]);
    let state = the_person_to_move(&page);
    assert_eq!(state["title"], "kalaha: human against random");
    assert!(
        tmp.path().join("results").is_dir(),
        "the session writes to results/"
    );
    stop(play);
    // Every line, up to the end of its output: the reader may lag behind the exit.
    let printed: Vec<String> = lines.iter().collect();
    assert!(
        printed
            .iter()
            .any(|l| l == "no game was played: no results were kept"),
        "{printed:?}"
    );
    assert!(!tmp.path().join("results").exists(), "results/ was kept");
    // A `results` that was there stays, with what it held.
    std::fs::create_dir_all(tmp.path().join("results/old")).unwrap();
    let (play, page, _lines) = serving_in(tmp.path(), &["play", "--engine", "random"]);
    the_person_to_move(&page);
    stop(play);
    let left: Vec<_> = std::fs::read_dir(tmp.path().join("results"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["old"]);
    // Two engines: the title names both, and their games are kept.
    let out = tmp.path().join("watched");
    let (play, page, _lines) = serving(&[
        "play",
        "--engine",
        "random",
        "--engine",
        "first",
        "--pace",
        "0s",
        "--out",
        &out.display().to_string(),
    ]);
    let start = Instant::now();
    let state = loop {
        let s = page.state();
        if s["finished"].as_u64().unwrap() > 0 {
            break s;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "no game: {s}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(state["title"], "kalaha: random against first");
    stop(play);
    assert!(out.join("games.csv").is_file());
    // The folder says it holds a play session, which a tournament does not continue.
    let saved = std::fs::read_to_string(out.join("tournament.toml")).unwrap();
    assert!(saved.contains("run = \"play\""), "{saved}");
    let o = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(["tournament", "--resume"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("holds the games of a play session"), "{said}");
}

/// Issue 32, point 4: a best-of-3 match played to its end in the browser: the first game
/// played out by clicks, the next ones resigned until the match is decided. The score is
/// on the page all along, the first player alternates, the result line ends it, and the
/// match's result is written beside the games, which are rated as any.
#[test]
fn a_best_of_three_match_in_chromium() {
    let Some((chromium, driver)) = chromium_for("a_best_of_three_match_in_chromium") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let out_arg = out.display().to_string();
    let (play, page, lines) = serving(&[
        "play",
        "--engine",
        "random",
        "--match",
        "best-of-3",
        "--out",
        &out_arg,
    ]);
    let (_driver, browser) = open_browser(&chromium, &driver, &tmp.path().join("profile"));
    browser.open(&page.url());
    let score = |b: &Browser| {
        b.run("return document.getElementById('match').textContent;")
            .as_str()
            .unwrap()
            .to_string()
    };
    wait_for(&browser, Duration::from_secs(20), "the first move", |s| {
        !s.enabled.is_empty()
    });
    assert_eq!(
        score(&browser),
        "Match, best of 3 games: human 0 – 0 random after 0 games"
    );
    let (games, seats) = play_out_best_of_three(&browser, &page);
    let expected: Vec<&str> = ["south", "north", "south"][..games.len()].to_vec();
    assert_eq!(seats, expected, "the first player alternates");
    if let Some(dir) = std::env::var_os("KALAHA_SCREENSHOTS").map(PathBuf::from) {
        std::fs::create_dir_all(&dir).unwrap();
        browser.screenshot(390, &dir.join("match-390.png"));
        browser.screenshot(1280, &dir.join("match-1280.png"));
    }
    let final_state = page.state();
    browser.call("DELETE", "", None);
    // SAFETY: signals our own child.
    unsafe { libc::kill(play.0.id() as i32, libc::SIGINT) };
    let mut play = play;
    assert!(play.0.wait().unwrap().success());
    let printed = the_rest(&lines);
    let m = &final_state["match"];
    assert!(
        printed.iter().any(|l| l == m["text"].as_str().unwrap()),
        "{printed:?}"
    );
    // match.csv agrees with the recorded games.
    let jsonl = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    let recorded: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recorded.len(), games.len());
    let mut wins = [0, 0];
    for g in &recorded {
        let winner = match g["result"].as_str().unwrap() {
            "1-0" => g["south"].as_str(),
            "0-1" => g["north"].as_str(),
            _ => None,
        };
        match winner {
            Some("human") => wins[0] += 1,
            Some("random") => wins[1] += 1,
            _ => {}
        }
    }
    let csv = std::fs::read_to_string(out.join("match.csv")).unwrap();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(
        row[..4],
        ["best-of-3", "human", "random", &games.len().to_string()]
    );
    assert_eq!(row[4], wins[0].to_string(), "{csv}");
    assert_eq!(row[6], wins[1].to_string(), "{csv}");
    let winner = if wins[0] > wins[1] { "human" } else { "random" };
    assert_eq!(row[9], winner, "{csv}");
    assert_eq!(row[10], games.join(" "), "{csv}");
    let ratings = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args([
            "ratings",
            &out_arg,
            "--out",
            &tmp.path().join("board").display().to_string(),
        ])
        .output()
        .unwrap();
    assert!(ratings.status.success(), "{ratings:?}");
    let standings = std::fs::read_to_string(tmp.path().join("board/standings.csv")).unwrap();
    assert!(
        standings
            .lines()
            .any(|l| l.contains(&format!(",human,{},", games.len()))),
        "{standings}"
    );
}

/// Runs `script` on the page until `done` holds of its value, for at most `limit`.
fn poll(
    b: &Browser,
    script: &str,
    limit: Duration,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let start = Instant::now();
    loop {
        let v = b.run(script);
        if done(&v) {
            return v;
        }
        assert!(start.elapsed() < limit, "timed out waiting for {what}: {v}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What the page shows of the guide.
const READ_GUIDE: &str = "
    const g = document.getElementById('guide');
    const b = document.querySelector('#g-board .board');
    const pits = [...document.querySelectorAll('#g-board button[data-guide-pit]')];
    const cells = b ? [...b.querySelectorAll('.seeds')].map((e) => Number(e.textContent)) : [];
    return {
      open: !g.hidden,
      game_hidden: document.getElementById('game').hidden,
      title: document.getElementById('g-title').textContent,
      text: document.getElementById('g-text').textContent,
      variant: document.getElementById('g-variant-text').textContent,
      verdict: document.getElementById('g-verdict').textContent,
      said: [...document.querySelectorAll('#g-said li')].map((l) => l.textContent),
      done: b ? b.dataset.done : null,
      moves: b ? Number(b.dataset.moves) : -1,
      animating: b ? b.dataset.animating === '1' : false,
      cells: cells,
      enabled: pits.filter((p) => !p.disabled).map((p) => Number(p.dataset.guidePit)),
      steps_done: [...document.querySelectorAll('#g-steps button')].map((t) => t.dataset.done === '1'),
      next: !document.getElementById('g-next').disabled,
    };";

fn guide_seen(b: &Browser) -> Value {
    b.run(READ_GUIDE)
}

/// Clicks pit `pit` of the guide's step and waits for the server's answer to be drawn
/// (`moves` sowings in all): returns what the guide shows then.
fn sow_in_guide(b: &Browser, pit: u64, moves: u64) -> Value {
    let s = guide_seen(b);
    assert!(
        s["enabled"].as_array().unwrap().contains(&json!(pit)),
        "pit {pit} is not offered: {s}"
    );
    b.click(&format!("#g-board button[data-guide-pit=\"{pit}\"]"));
    poll(
        b,
        READ_GUIDE,
        Duration::from_secs(20),
        "the guide's answer",
        |v| v["moves"] == moves && !v["animating"].as_bool().unwrap() && v["verdict"] != "",
    )
}

/// The board's seeds as the page draws them (north's store, north's pits from pit 1,
/// south's pits from pit 1, south's store), from its cells in document order.
fn board_numbers(cells: &Value, pits: usize) -> (u64, Vec<u64>, Vec<u64>, u64) {
    let c: Vec<u64> = cells
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(c.len(), 2 * pits + 2, "{cells}");
    // Document order: north's store, north's pits 1..=P (drawn right to left), south's
    // pits 1..=P, south's store.
    (
        c[0],
        c[1..=pits].to_vec(),
        c[pits + 1..=2 * pits].to_vec(),
        c[2 * pits + 1],
    )
}

/// Issue 32: `kalaha play --learn` opens the page on the rules guide, on the session's
/// variant; the four steps are completed by clicking (a wrong pit is answered "not yet",
/// a pit that gives an extra turn lets the person go on), each sowing played by the
/// referee; the count of the last step changes with the variant chosen on the page; the
/// three cards from the same position are an ordinary move, an extra turn and a capture.
/// The guide's digits do not sow in the game, and a session with only the guide keeps no
/// results.
#[test]
fn the_rules_guide_in_chromium() {
    let Some((chromium, driver)) = chromium_for("the_rules_guide_in_chromium") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let out_arg = out.display().to_string();
    let (play, page, lines) = serving(&[
        "play",
        "--engine",
        "random",
        "--learn",
        "--sweep",
        "empty_side",
        "--out",
        &out_arg,
    ]);
    let (_driver, browser) = open_browser(&chromium, &driver, &tmp.path().join("profile"));
    browser.open(&page.url());
    let first = poll(
        &browser,
        READ_GUIDE,
        Duration::from_secs(20),
        "the guide",
        |v| v["open"] == true && v["title"] != "",
    );
    assert_eq!(first["game_hidden"], true, "{first}");
    assert_eq!(first["title"], "Step 1 of 4: Sowing and the store");
    let status = poll(
        &browser,
        "return document.getElementById('status').textContent;",
        Duration::from_secs(20),
        "the status line",
        |v| v.as_str().unwrap().contains("game 1 waits"),
    );
    assert_eq!(
        status,
        "Learning the rules: game 1 waits for you (Back to the game, below the guide)."
    );
    assert!(
        first["variant"]
            .as_str()
            .unwrap()
            .contains("the seeds left at the end go to the side that ran out"),
        "{first}"
    );
    assert_eq!(
        browser.run("return document.getElementById('g-sweep').value;"),
        "empty_side"
    );
    // The board of three pits: south 2 1 5, north 3 3 3, empty stores; every pit offered.
    assert_eq!(
        board_numbers(&first["cells"], 3),
        (0, vec![3, 3, 3], vec![2, 1, 5], 0)
    );
    assert_eq!(first["enabled"], json!([1, 2, 3]));
    if let Some(dir) = std::env::var_os("KALAHA_SCREENSHOTS").map(PathBuf::from) {
        std::fs::create_dir_all(&dir).unwrap();
        browser.screenshot(390, &dir.join("guide-start-390.png"));
        browser.screenshot(1280, &dir.join("guide-start-1280.png"));
    }

    // Step 1: pit 1 stops short of the store (not yet), pit 3 reaches it. The first with
    // the digit key: in the guide, digits sow the guide's pits, not the game's.
    browser.keys("1");
    let miss = poll(
        &browser,
        READ_GUIDE,
        Duration::from_secs(20),
        "pit 1",
        |v| v["moves"] == 1 && !v["animating"].as_bool().unwrap() && v["verdict"] != "",
    );
    assert!(
        miss["verdict"]
            .as_str()
            .unwrap()
            .starts_with("Not yet: no seed reached your store"),
        "{miss}"
    );
    assert_eq!(miss["done"], "0");
    assert_eq!(miss["enabled"], json!([]), "the turn passed: {miss}");
    assert_eq!(miss["next"], false);
    let game = page.state();
    assert_eq!(
        game["boards"][0]["frames"],
        json!([]),
        "a digit in the guide sowed in the game"
    );
    browser.click("#g-again");
    poll(
        &browser,
        READ_GUIDE,
        Duration::from_secs(5),
        "a new start",
        |v| v["moves"] == 0 && v["enabled"] == json!([1, 2, 3]),
    );
    // Seed by seed: the board is drawn while the seeds land.
    browser.click("#g-board button[data-guide-pit=\"3\"]");
    poll(
        &browser,
        READ_GUIDE,
        Duration::from_secs(5),
        "the sowing drawn",
        |v| v["animating"] == true,
    );
    let s = poll(
        &browser,
        READ_GUIDE,
        Duration::from_secs(20),
        "pit 3",
        |v| v["moves"] == 1 && !v["animating"].as_bool().unwrap() && v["verdict"] != "",
    );
    assert_eq!(s["done"], "1", "{s}");
    assert!(s["verdict"].as_str().unwrap().starts_with("Done"), "{s}");
    // RULES.md: five seeds from pit 3 go to the store, north's three pits, past north's
    // store, and south's pit 1.
    assert_eq!(
        board_numbers(&s["cells"], 3),
        (0, vec![4, 4, 4], vec![3, 1, 0], 1)
    );
    assert!(
        s["said"][0]
            .as_str()
            .unwrap()
            .contains("(skipping north's store) your pit 1"),
        "{s}"
    );
    assert_eq!(s["steps_done"], json!([true, false, false, false]));
    browser.click("#g-next");

    // Step 2: pit 2 (two seeds, two steps from the store) gives the extra turn.
    let s = poll(
        &browser,
        READ_GUIDE,
        Duration::from_secs(5),
        "step 2",
        |v| v["title"] == "Step 2 of 4: The extra turn",
    );
    assert_eq!(s["enabled"], json!([1, 2, 3]));
    let s = sow_in_guide(&browser, 2, 1);
    assert_eq!(s["done"], "1", "{s}");
    assert!(
        s["said"][0]
            .as_str()
            .unwrap()
            .ends_with("an extra turn, you move again."),
        "{s}"
    );
    browser.click("#g-next");

    // Step 3: pit 1 ends in the store (go on, but no capture is left), pit 2 captures.
    poll(
        &browser,
        READ_GUIDE,
        Duration::from_secs(5),
        "step 3",
        |v| v["title"] == "Step 3 of 4: The capture",
    );
    let s = sow_in_guide(&browser, 1, 1);
    assert_eq!(s["verdict"], "You move again: go on.", "{s}");
    assert_eq!(s["done"], "0");
    assert_eq!(s["enabled"], json!([2, 3]), "{s}");
    browser.click("#g-again");
    poll(
        &browser,
        READ_GUIDE,
        Duration::from_secs(5),
        "a new start",
        |v| v["moves"] == 0,
    );
    let s = sow_in_guide(&browser, 2, 1);
    assert_eq!(s["done"], "1", "{s}");
    // Seed 000's diagram: 1 + 5 = 6 seeds, the store from 3 to 9.
    assert_eq!(
        board_numbers(&s["cells"], 3),
        (3, vec![0, 1, 1], vec![3, 0, 0], 9)
    );
    browser.click("#g-next");

    // Step 4, sweep to the empty side: the five seeds left in north's row go to south.
    let s = poll(
        &browser,
        READ_GUIDE,
        Duration::from_secs(5),
        "step 4",
        |v| v["title"] == "Step 4 of 4: The end of the game and the count",
    );
    assert!(
        s["text"]
            .as_str()
            .unwrap()
            .contains("all go to the store of the player whose row ran empty"),
        "{s}"
    );
    sow_in_guide(&browser, 3, 1);
    sow_in_guide(&browser, 2, 2);
    let s = sow_in_guide(&browser, 3, 3);
    assert_eq!(s["done"], "1", "{s}");
    assert!(
        s["verdict"]
            .as_str()
            .unwrap()
            .starts_with("Done: the game is over. You win, 17 to 6."),
        "{s}"
    );
    assert_eq!(s["steps_done"], json!([true, true, true, true]));
    // The game of the step is over: nobody is to move.
    assert_eq!(
        browser.run("return document.querySelectorAll('#g-board .to-move').length;"),
        0
    );
    if let Some(dir) = std::env::var_os("KALAHA_SCREENSHOTS").map(PathBuf::from) {
        std::fs::create_dir_all(&dir).unwrap();
        browser.screenshot_of(390, Some("#g-title"), &dir.join("guide-390.png"));
        browser.screenshot(1280, &dir.join("guide-1280.png"));
    }

    // The owner's sweep, chosen on the page: the same step in the other order loses.
    browser.run(
        "const s = document.getElementById('g-sweep'); s.value = 'owner'; \
         s.dispatchEvent(new Event('change'));",
    );
    poll(
        &browser,
        READ_GUIDE,
        Duration::from_secs(10),
        "the owner's rules",
        |v| v["variant"].as_str().unwrap().contains("go to their owner"),
    );
    browser.click("#g-steps button[data-step=\"end\"]");
    let s = poll(
        &browser,
        READ_GUIDE,
        Duration::from_secs(5),
        "step 4",
        |v| v["title"] == "Step 4 of 4: The end of the game and the count",
    );
    assert!(
        s["text"]
            .as_str()
            .unwrap()
            .contains("each player's seeds to that player's store")
    );
    assert_eq!(
        s["steps_done"],
        json!([false, false, false, false]),
        "new rules, new start"
    );
    sow_in_guide(&browser, 2, 1);
    let s = sow_in_guide(&browser, 3, 2);
    assert!(
        s["verdict"]
            .as_str()
            .unwrap()
            .starts_with("Done: the game is over. North wins, 11 to 12."),
        "{s}"
    );
    assert!(
        s["said"][1]
            .as_str()
            .unwrap()
            .contains("The 6 seeds left in north's pits go to north's store."),
        "{s}"
    );

    // The three cards: the same position, one pit each.
    let read_cards = "return [...document.querySelectorAll('#g-cards .card')].map((c) => ({ \
        lesson: c.dataset.lesson, outcome: c.dataset.outcome || null, \
        text: c.querySelector('.outcome').textContent, \
        enabled: [...c.querySelectorAll('button[data-guide-pit]')].filter((p) => !p.disabled).map((p) => Number(p.dataset.guidePit)), \
        cells: [...c.querySelectorAll('.seeds')].map((e) => Number(e.textContent)) }));";
    let cards = browser.run(read_cards);
    let cards = cards.as_array().unwrap();
    assert_eq!(cards.len(), 3);
    for c in cards {
        assert_eq!(c["cells"], cards[0]["cells"], "the same position");
    }
    let expected = [
        ("card-ordinary", 5, "ordinary", "The turn passes to north."),
        (
            "card-extra",
            4,
            "extra_turn",
            "an extra turn, you move again.",
        ),
        (
            "card-capture",
            1,
            "capture",
            "you capture 1 + 4 = 5 seeds into your store",
        ),
    ];
    for (i, (lesson, pit, outcome, words)) in expected.iter().enumerate() {
        assert_eq!(cards[i]["lesson"], *lesson);
        assert_eq!(cards[i]["enabled"], json!([pit]), "one pit a card");
        browser.click(&format!(
            ".card[data-lesson=\"{lesson}\"] button[data-guide-pit=\"{pit}\"]"
        ));
        let all = poll(
            &browser,
            read_cards,
            Duration::from_secs(20),
            "the card",
            |v| v[i]["outcome"].is_string(),
        );
        assert_eq!(all[i]["outcome"], *outcome, "{all}");
        assert!(all[i]["text"].as_str().unwrap().contains(words), "{all}");
    }
    if let Some(dir) = std::env::var_os("KALAHA_SCREENSHOTS").map(PathBuf::from) {
        browser.screenshot_of(390, Some("#g-cards-title"), &dir.join("cards-390.png"));
        browser.screenshot_of(1280, Some("#g-cards-title"), &dir.join("cards-1280.png"));
    }

    // Back to the game, and the guide again from its button.
    browser.click("#g-close");
    let s = wait_for(&browser, Duration::from_secs(10), "the game", |s| {
        !s.enabled.is_empty()
    });
    assert_eq!(s.plies, 0);
    assert_eq!(guide_seen(&browser)["open"], false);
    // The note on the first player's advantage names the variant its value is for (known
    // or not, as the solver finished in time or not).
    let advantage = browser.run("return document.getElementById('advantage').textContent;");
    assert!(
        advantage.as_str().unwrap().contains(
            "this board (6 pits, 4 seeds each, the seeds left go to the side that ran out)"
        ),
        "{advantage}"
    );
    browser.click("#learn");
    poll(
        &browser,
        READ_GUIDE,
        Duration::from_secs(5),
        "the guide again",
        |v| v["open"] == true && v["game_hidden"] == true,
    );
    browser.call("DELETE", "", None);
    // SAFETY: signals our own child.
    unsafe { libc::kill(play.0.id() as i32, libc::SIGINT) };
    let mut play = play;
    assert!(play.0.wait().unwrap().success());
    let printed = the_rest(&lines);
    assert!(
        printed
            .iter()
            .any(|l| l == "no game was played: no results were kept"),
        "{printed:?}"
    );
    assert!(!out.exists());
}

/// Issue 32: the guide's routes and the match picker's answer only the page's token,
/// like every other route; with it, the guide plays by the rules and a match is chosen.
#[test]
fn the_guide_and_the_match_picker_need_the_token() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let out_arg = out.display().to_string();
    let (play, page, _lines) = serving(&["play", "--engine", "random", "--out", &out_arg]);
    the_person_to_move(&page);
    for (method, path) in [
        ("GET", "/guide"),
        ("GET", "/guide?sweep=none"),
        ("GET", "/guide/move?lesson=sow&moves=3"),
        (
            "GET",
            "/guide/move?lesson=capture&moves=2&empty_capture=true",
        ),
        ("POST", "/match?format=best-of-3"),
        ("POST", "/match?format=single"),
    ] {
        let (status, body) = page.call_without_token(method, path);
        assert_eq!(status, 403, "{method} {path}: {body}");
        assert!(!body.to_string().contains("sowings"), "{body}");
        assert!(!body.to_string().contains("steps"), "{body}");
    }
    let state = page.state();
    assert_eq!(
        state["match"],
        Value::Null,
        "a match was chosen without the token"
    );
    // With the token.
    let (status, v) = page.call("GET", "/guide");
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["steps"].as_array().unwrap().len(), 4);
    assert_eq!(v["cards"].as_array().unwrap().len(), 3);
    let (status, v) = page.call("GET", "/guide/move?lesson=sow&moves=3");
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["done"], true);
    let (status, v) = page.call("GET", "/guide/move?lesson=sow&moves=2,1");
    assert_eq!(status, 422, "{v}");
    let (status, v) = page.call("POST", "/match?format=best-of-0");
    assert_eq!(status, 409, "{v}");
    let (status, v) = page.call("POST", "/match?format=first-to-2");
    assert_eq!(status, 200, "{v}");
    let state = page.state();
    assert_eq!(state["match"]["format_text"], "first to 2 wins", "{state}");
    assert_eq!(state["can_choose_match"], false);
    // SAFETY: signals our own child.
    unsafe { libc::kill(play.0.id() as i32, libc::SIGINT) };
    let mut play = play;
    assert!(play.0.wait().unwrap().success());
}

/// A best-of-3 match against `random`, from its first game (the person to move): the
/// first played out by clicks, the next ones resigned until the match is decided, the
/// score checked on the page after every game. Returns the games and the person's seats.
fn play_out_best_of_three(browser: &Browser, page: &Page) -> (Vec<String>, Vec<Value>) {
    let score = |b: &Browser| {
        b.run("return document.getElementById('match').textContent;")
            .as_str()
            .unwrap()
            .to_string()
    };
    let (game1, _, _) = play_a_whole_game(browser, page);
    let mut seats = vec![page.state()["boards"][0]["person"].clone()];
    let mut games = vec![game1];
    loop {
        let state = page.state();
        let m = &state["match"];
        let after = format!(
            "human {} – {} random",
            m["wins"][0].as_u64().unwrap(),
            m["wins"][1].as_u64().unwrap()
        );
        let shown = score(browser);
        assert!(shown.contains(&after), "{shown} / {m}");
        assert_eq!(m["games"], games.len() as u64, "{m}");
        if m["over"] == true {
            assert!(
                shown.starts_with("Match over, best of 3 games: "),
                "{shown}"
            );
            assert_eq!(
                browser.run("return document.getElementById('new-game').disabled;"),
                true
            );
            break;
        }
        assert!(games.len() < 3, "a best of 3 not over after 3 games: {m}");
        // The next game, resigned at its first turn of the person.
        browser.click("#new-game");
        let last = games.last().unwrap().clone();
        let s = wait_for(browser, Duration::from_secs(20), "the next game", |s| {
            s.game != last && !s.enabled.is_empty()
        });
        seats.push(page.state()["boards"][0]["person"].clone());
        browser.click("#resign");
        wait_for(browser, Duration::from_secs(20), "the resignation", |n| {
            n.game == s.game && n.result.is_some()
        });
        games.push(s.game);
    }
    (games, seats)
}

/// Issue 32: a best-of-3 match chosen on the page (no --match), played to its end: the
/// game just started is its first, the score is shown all along, the first player
/// alternates, the result line ends it and is written to match.csv beside the games,
/// which `kalaha ratings` rates; then the page goes back to single games.
#[test]
fn a_best_of_three_match_chosen_on_the_page_in_chromium() {
    let Some((chromium, driver)) =
        chromium_for("a_best_of_three_match_chosen_on_the_page_in_chromium")
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let out_arg = out.display().to_string();
    let (play, page, lines) = serving(&["play", "--engine", "random", "--out", &out_arg]);
    let (_driver, browser) = open_browser(&chromium, &driver, &tmp.path().join("profile"));
    browser.open(&page.url());
    wait_for(&browser, Duration::from_secs(20), "the first move", |s| {
        !s.enabled.is_empty()
    });
    let picker = "return { hidden: document.getElementById('match-picker').hidden, \
                  kind: document.getElementById('format-kind').value, \
                  n: document.getElementById('format-n').value, \
                  hint: document.getElementById('match-hint').textContent, \
                  score_hidden: document.getElementById('match').hidden };";
    let p = browser.run(picker);
    assert_eq!(p["hidden"], false, "{p}");
    assert_eq!(p["score_hidden"], true, "no match yet: {p}");
    assert_eq!(
        p["hint"], "The game just started is the match's first.",
        "{p}"
    );
    // Every format of the flag is offered, with the site's numbers.
    let options = browser
        .run("return [...document.getElementById('format-kind').options].map((o) => o.value);");
    assert_eq!(
        options,
        json!(["best-of", "first-to", "seeds-over", "seeds-to", "single"])
    );
    browser.run(
        "const k = document.getElementById('format-kind'); k.value = 'seeds-to'; \
         k.dispatchEvent(new Event('change'));",
    );
    assert_eq!(browser.run(picker)["n"], "100");
    browser.run(
        "const k = document.getElementById('format-kind'); k.value = 'best-of'; \
         k.dispatchEvent(new Event('change'));",
    );
    assert_eq!(browser.run(picker)["n"], "3");
    if let Some(dir) = std::env::var_os("KALAHA_SCREENSHOTS").map(PathBuf::from) {
        std::fs::create_dir_all(&dir).unwrap();
        browser.screenshot(390, &dir.join("picker-390.png"));
        browser.screenshot(1280, &dir.join("picker-1280.png"));
    }
    browser.click("#start-match");
    let score = "return document.getElementById('match').hidden ? null : \
                 document.getElementById('match').textContent;";
    let shown = poll(&browser, score, Duration::from_secs(10), "the score", |v| {
        v.is_string()
    });
    assert_eq!(
        shown,
        "Match, best of 3 games: human 0 – 0 random after 0 games"
    );
    let p = browser.run(picker);
    assert_eq!(p["hidden"], true, "no other format during the match: {p}");
    let state = page.state();
    assert_eq!(state["match"]["first_game"], 1, "{state}");
    let screenshots = std::env::var_os("KALAHA_SCREENSHOTS").map(PathBuf::from);
    if let Some(dir) = &screenshots {
        // A match in progress: the score above the board.
        let s = seen(&browser);
        browser.click(&format!("button[data-pit=\"{}\"]", s.enabled[0]));
        // The engine's reply drawn, the person to move again (or the game over).
        wait_for(&browser, Duration::from_secs(20), "the reply", |n| {
            n.plies > s.plies && (!n.enabled.is_empty() || n.result.is_some())
        });
        browser.screenshot(390, &dir.join("match-in-progress-390.png"));
        browser.screenshot(1280, &dir.join("match-in-progress-1280.png"));
    }
    let (games, seats) = play_out_best_of_three(&browser, &page);
    let expected: Vec<&str> = ["south", "north", "south"][..games.len()].to_vec();
    assert_eq!(seats, expected, "the first player alternates");
    let final_state = page.state();
    let m = final_state["match"].clone();
    assert_eq!(m["over"], true);
    let result_line = browser.run(score);
    assert_eq!(result_line, m["text"]);
    if let Some(dir) = &screenshots {
        browser.screenshot(390, &dir.join("match-over-390.png"));
        browser.screenshot(1280, &dir.join("match-over-1280.png"));
    }
    // Back to single games: the picker is offered again, and the next game starts.
    assert_eq!(browser.run(picker)["hidden"], false);
    browser.run(
        "const k = document.getElementById('format-kind'); k.value = 'single'; \
         k.dispatchEvent(new Event('change'));",
    );
    let last = games.last().unwrap().clone();
    browser.click("#start-match");
    let next = wait_for(&browser, Duration::from_secs(20), "a single game", |s| {
        s.game != last && !s.game.is_empty()
    });
    let state = page.state();
    assert_eq!(state["match"], Value::Null, "{state}");
    browser.call("DELETE", "", None);
    // SAFETY: signals our own child.
    unsafe { libc::kill(play.0.id() as i32, libc::SIGINT) };
    let mut play = play;
    assert!(play.0.wait().unwrap().success());
    let printed = the_rest(&lines);
    assert!(
        printed.iter().any(|l| l == m["text"].as_str().unwrap()),
        "{printed:?}"
    );
    // match.csv: the match, its games as recorded, the single game after it in none.
    let jsonl = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    let recorded: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        recorded.len(),
        games.len(),
        "the game in progress is not recorded"
    );
    assert!(!jsonl.contains(&next.game));
    let mut wins = [0, 0];
    for g in &recorded {
        let winner = match g["result"].as_str().unwrap() {
            "1-0" => g["south"].as_str(),
            "0-1" => g["north"].as_str(),
            _ => None,
        };
        match winner {
            Some("human") => wins[0] += 1,
            Some("random") => wins[1] += 1,
            _ => {}
        }
    }
    let csv = std::fs::read_to_string(out.join("match.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2, "{csv}");
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(
        row[..4],
        ["best-of-3", "human", "random", &games.len().to_string()]
    );
    assert_eq!(
        (row[4], row[6]),
        (&*wins[0].to_string(), &*wins[1].to_string()),
        "{csv}"
    );
    let winner = if wins[0] > wins[1] { "human" } else { "random" };
    assert_eq!(row[9], winner, "{csv}");
    assert_eq!(row[10], games.join(" "), "{csv}");
    let ratings = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args([
            "ratings",
            &out_arg,
            "--out",
            &tmp.path().join("board").display().to_string(),
        ])
        .output()
        .unwrap();
    assert!(ratings.status.success(), "{ratings:?}");
    let standings = std::fs::read_to_string(tmp.path().join("board/standings.csv")).unwrap();
    assert!(
        standings
            .lines()
            .any(|l| l.contains(&format!(",human,{},", games.len()))),
        "{standings}"
    );
}

/// A session whose page cannot be served (its port is taken) says so, and keeps nothing:
/// neither its folder nor the `results/` made for it.
#[test]
fn a_session_on_a_taken_port_keeps_nothing() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(["play", "--engine", "random", "--port", &port])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("choose another --port"), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
    // With --out, the folder not made yet is no failure to remove.
    let o = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args([
            "play", "--engine", "random", "--port", &port, "--out", "mine",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("failed to remove"), "{err}");
    assert!(!dir.path().join("mine").exists());
}
