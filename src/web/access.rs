//! Who may use the page: whoever holds its token. The server draws the token from the
//! operating system's random source when it starts; the address it prints carries it
//! (`http://127.0.0.1:PORT/?token=...`), and the page's script sends it with every request
//! it makes (the `X-Kalaha-Token` header, or `token=` in the address of its event stream,
//! which cannot carry a header). A request without it is refused: other programs on the
//! machine, the engines being played among them, can reach the port but not the token.
//!
//! There is no cookie: a browser sends the cookies of 127.0.0.1 to every port of
//! 127.0.0.1, so a cookie would go to any other server there too.

use std::io;

/// Random bytes in a token: 256 bits.
const TOKEN_BYTES: usize = 32;

/// The page's secret: [`TOKEN_BYTES`] from the operating system, written in hex (so it
/// needs no escaping in an address).
pub(crate) struct Token(String);

impl Token {
    /// A new token from the operating system's random source.
    pub(crate) fn new() -> io::Result<Token> {
        use rand::TryRng;
        let mut bytes = [0u8; TOKEN_BYTES];
        rand::rngs::SysRng
            .try_fill_bytes(&mut bytes)
            .map_err(|e| io::Error::other(format!("no random bytes for the page's token: {e}")))?;
        Ok(Token(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// The token as it goes in an address or a header.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `given` is the token, compared in a time that does not depend on where
    /// they differ (only on the length, which is no secret).
    pub(crate) fn matches(&self, given: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), given.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let diff = a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y));
        std::hint::black_box(diff) == 0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_compared_whole() {
        let a = Token::new().unwrap();
        let b = Token::new().unwrap();
        assert_eq!(a.as_str().len(), 64);
        assert!(a.as_str().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a.as_str(), b.as_str());
        assert!(a.matches(a.as_str()));
        assert!(!a.matches(b.as_str()));
        assert!(!a.matches(""));
        assert!(!a.matches(&a.as_str()[..63]));
        assert!(!a.matches(&format!("{}0", a.as_str())));
        let mut last = a.as_str().to_string();
        let flipped = if last.ends_with('0') { '1' } else { '0' };
        last.pop();
        last.push(flipped);
        assert!(!a.matches(&last));
        assert_eq!(format!("{a:?}"), "Token(..)");
    }
}
