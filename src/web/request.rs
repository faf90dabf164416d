//! Reading an HTTP/1.1 request from the page's clients: the head parsed and bounded, the
//! body read and dropped. Anything malformed or ambiguous (a parameter or a header the
//! server reads given twice) is refused with a status and the reason, never guessed at.

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// The longest request head (request line and headers), in bytes.
pub(crate) const MAX_HEAD: usize = 8 * 1024;
/// The longest request body, in bytes (no route needs one).
pub(crate) const MAX_BODY: usize = 1024;
/// Most headers in a request.
const MAX_HEADERS: usize = 64;
/// Headers the server reads: each may appear once (two `Host`s could name two servers).
const SINGLE_HEADERS: [&str; 6] = [
    "host",
    "content-length",
    "transfer-encoding",
    "origin",
    "x-kalaha",
    "x-kalaha-token",
];

/// Why a request is refused: the status and the reason.
pub(crate) type Refusal = (u16, String);

/// A parsed request: the method, the path and query (decoded) and the headers (names in
/// lower case).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Request {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
}

impl Request {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads one request (its body, if any, is read and dropped); `None` when the client
/// closed the connection before sending anything.
pub(crate) async fn read_request(stream: &mut TcpStream) -> Result<Option<Request>, Refusal> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    let end = loop {
        if let Some(end) = head_end(&buf) {
            break end;
        }
        if buf.len() > MAX_HEAD {
            return Err((431, "the request head is over 8 KiB".to_string()));
        }
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|_| (400, "the request could not be read".to_string()))?;
        if n == 0 {
            if buf.is_empty() {
                return Ok(None);
            }
            return Err((400, "the request ended before its headers".to_string()));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    if end > MAX_HEAD {
        return Err((431, "the request head is over 8 KiB".to_string()));
    }
    let request = parse_head(&buf[..end])?;
    if request.header("transfer-encoding").is_some() {
        return Err((
            411,
            "chunked request bodies are not accepted: send Content-Length".to_string(),
        ));
    }
    let length = match request.header("content-length") {
        None => 0,
        Some(v) if !v.bytes().all(|b| b.is_ascii_digit()) || v.is_empty() => {
            return Err((400, "Content-Length is not a number".to_string()));
        }
        Some(v) => v
            .parse::<usize>()
            .map_err(|_| (400, "Content-Length is not a number".to_string()))?,
    };
    if length > MAX_BODY {
        return Err((413, "the request body is over 1 KiB".to_string()));
    }
    let mut have = buf.len() - end;
    while have < length {
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|_| (400, "the request body could not be read".to_string()))?;
        if n == 0 {
            return Err((400, "the request body ended early".to_string()));
        }
        have += n;
    }
    Ok(Some(request))
}

/// The length of the head (up to and including the blank line), once it is complete.
fn head_end(buf: &[u8]) -> Option<usize> {
    // The first blank line, whether its lines end in CRLF or LF alone.
    let crlf = buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4);
    let lf = buf.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Parses a request head. Errors are a status and the reason.
pub(crate) fn parse_head(head: &[u8]) -> Result<Request, Refusal> {
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
        if params.iter().any(|(name, _)| *name == k) {
            return Err(bad(&format!("the query gives {k:?} twice")));
        }
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
        let name = name.to_ascii_lowercase();
        if SINGLE_HEADERS.contains(&name.as_str()) && headers.iter().any(|(n, _)| *n == name) {
            return Err(bad(&format!("the header {name} is given twice")));
        }
        headers.push((name, value.trim().to_string()));
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

#[cfg(test)]
mod tests {
    use super::*;

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
        // What the server reads must be said once: which pit, which host?
        for twice in [
            &b"POST /move?game=t-1&pit=3&pit=4 HTTP/1.1\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\nHost: evil.example\r\n\r\n",
            b"GET / HTTP/1.1\r\nContent-Length: 0\r\ncontent-length: 5\r\n\r\n",
        ] {
            let e = parse_head(twice).unwrap_err();
            assert_eq!(e.0, 400, "{:?}: {e:?}", String::from_utf8_lossy(twice));
            assert!(e.1.contains("twice"), "{e:?}");
        }
        // An LF-only head ends at its first blank line, whatever its body holds.
        assert_eq!(head_end(b"GET / HTTP/1.1\nA: b\n\nx\r\n\r\ny"), Some(21));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nx\n\n"), Some(18));
        // Headers the server does not read may repeat.
        assert!(parse_head(b"GET / HTTP/1.1\r\nAccept: a\r\nAccept: b\r\n\r\n").is_ok());
        let many: String = (0..70).map(|i| format!("h{i}: v\r\n")).collect();
        let head = format!("GET / HTTP/1.1\r\n{many}\r\n");
        assert_eq!(parse_head(head.as_bytes()).unwrap_err().0, 431);
    }
}
