//! The leaderboard rendered by a real browser (headless Chromium): its content, and at 400
//! and 1200 px that nothing reaches past the window.

use super::{ENGINES, ratings, write_tournament};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Whether this is a CI run (`CI` set to anything but empty, `0` or `false`, as CI services
/// set it to `true`).
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// A Chromium to render pages with: fails the test in CI when there is none, else `None`
/// after saying why the test is skipped.
fn chromium(test: &str) -> Option<&'static str> {
    let found = [
        "/usr/bin/chromium",
        "chromium",
        "chromium-browser",
        "google-chrome",
    ]
    .into_iter()
    .find(|b| {
        Command::new(b)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if found.is_none() {
        assert!(
            !in_ci(),
            "{test}: chromium is required in CI (CI is set) and none was found: install it \
             (apt-get install chromium) or put it on PATH"
        );
        eprintln!("skipping {test}: chromium is not installed (CI would fail here)");
    }
    found
}

/// The page's DOM after loading `url` in headless Chromium with a fresh profile and no
/// network.
fn dump_dom(browser: &str, profile: &Path, url: &str, window: &str) -> String {
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--window-size={window}"))
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).map(|_| s)
    });
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().unwrap().unwrap()
}

/// A script that checks, in the page it runs in, that nothing reaches past the viewport
/// horizontally (tables may scroll inside their `.wrap` box) and reports the viewport's
/// width, the chart's width and the offenders to the parent page.
const OVERFLOW_PROBE: &str = r#"<script>
(function () {
  var root = document.documentElement, vw = root.clientWidth, bad = [];
  if (root.scrollWidth > vw) bad.push('the page is ' + root.scrollWidth + ' px wide');
  document.querySelectorAll('body *').forEach(function (e) {
    var box = e.closest('.wrap');
    if (box && box !== e) return;
    var r = e.getBoundingClientRect();
    if (r.width > 0 && (r.right > vw + 0.5 || r.left < -0.5))
      bad.push(e.tagName + (e.id ? '#' + e.id : '') + ' at ' + Math.round(r.left) + '..' + Math.round(r.right));
  });
  var chart = document.getElementById('elo-chart').getBoundingClientRect();
  parent.document.getElementById('probe-' + vw).setAttribute('data-probe',
    JSON.stringify({ chart: Math.round(chart.right), bad: bad.slice(0, 8) }));
})();
</script>"#;

/// Escapes text for a double-quoted HTML attribute.
fn attribute(s: &str) -> String {
    s.replace('&', "&amp;").replace('"', "&quot;")
}

/// A page that shows `page` (without its content security policy, so that the probe may
/// run) in frames `widths` CSS pixels wide: headless Chromium's window cannot be made
/// narrower than 500 px, a frame can.
fn frames_page(page: &str, widths: &[u32]) -> String {
    let start = page
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .unwrap();
    let end = start + page[start..].find('>').unwrap() + 1;
    let probed = format!("{}{}", &page[..start], &page[end..])
        .replace("</body>", &format!("{OVERFLOW_PROBE}</body>"));
    let mut host = String::from("<!DOCTYPE html><html><body style=\"margin:0\">");
    for w in widths {
        host.push_str(&format!(
            "<div id=\"probe-{w}\"></div><iframe style=\"border:0;display:block;width:{w}px;\
             height:900px\" srcdoc=\"{}\"></iframe>",
            attribute(&probed)
        ));
    }
    host + "</body></html>"
}

/// An engine name of the longest kind (64 characters), without a place to break it.
const LONG_NAME: &str = "an-engine-with-a-very-long-name-that-cannot-break-anywhere-v1.23";

/// Renders leaderboard.html in headless Chromium: the rendered page holds every engine's
/// row and the chart, escapes names, and at 400 and 1200 px nothing reaches past the width
/// of the window (tables scroll in their own boxes, the chart scales). Skips when Chromium
/// is missing, except in CI.
#[test]
fn leaderboard_renders_in_a_browser() {
    let Some(browser) = chromium("leaderboard_renders_in_a_browser") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dirs = write_tournament(tmp.path(), 1);
    let csv = dirs[0].join("games.csv");
    let mut text = std::fs::read_to_string(&csv).unwrap();
    for (k, (south, north)) in [(LONG_NAME, "alpha"), ("alpha", LONG_NAME)]
        .iter()
        .enumerate()
    {
        text.push_str(&format!(
            "T1-{},1,900,{south},{north},1 2,1-0,30,18,40,normal,,,12\n",
            900 + k
        ));
    }
    std::fs::write(&csv, text).unwrap();
    let out = tmp.path().join("site");
    let o = ratings(
        &dirs,
        &out,
        &[
            "--title",
            "A title long enough to need more than one line on a phone",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = out.join("leaderboard.html");
    let dom = dump_dom(
        browser,
        &tmp.path().join("profile"),
        &format!("file://{}", page.display()),
        "1200,900",
    );
    assert!(
        dom.contains("<svg id=\"elo-chart\""),
        "no chart in the rendered page"
    );
    let engines = ENGINES.len() + 1;
    assert_eq!(dom.matches("class=\"engine-row\"").count(), engines);
    assert_eq!(dom.matches("class=\"chart-row\"").count(), engines);
    for name in ENGINES.iter().chain([&LONG_NAME]) {
        // The browser serialises text content with &, < and > escaped (quotes as they are).
        let text = name
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        assert!(
            dom.contains(&format!(">{text}</td>")) || dom.contains(&format!(">{text}<span")),
            "no standings row for {name:?}"
        );
    }
    assert!(!dom.contains("<i>beta"), "an engine name was not escaped");

    let widths = [400, 1200];
    let host = tmp.path().join("frames.html");
    let html = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&host, frames_page(&html, &widths)).unwrap();
    let dom = dump_dom(
        browser,
        &tmp.path().join("profile-frames"),
        &format!("file://{}", host.display()),
        "1300,900",
    );
    for w in widths {
        let marker = format!("id=\"probe-{w}\" data-probe=\"");
        let at = dom
            .find(&marker)
            .unwrap_or_else(|| panic!("the page did not render at {w} px:\n{dom}"))
            + marker.len();
        let probe = dom[at..][..dom[at..].find('"').unwrap()].replace("&quot;", "\"");
        let probe: serde_json::Value = serde_json::from_str(&probe).unwrap();
        assert_eq!(
            probe["bad"],
            serde_json::json!([]),
            "at {w} px these reach past the window: {probe}"
        );
        let right = probe["chart"].as_f64().unwrap();
        assert!(right > 0.0 && right <= w as f64, "at {w} px: {probe}");
    }
}
