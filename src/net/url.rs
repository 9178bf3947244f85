//! URLs as zero decides things about them, in one place: whether a host is this machine
//! (loopback), whether a URL is a vendor's own endpoint, and whether a request goes through
//! the proxy of the environment. Each is decided on a real parse (scheme, userinfo, host,
//! port), never on the text: `http://localhost:1@attacker.example` is attacker.example, and
//! `http://127.0.0.1.attacker.example` is no address. Capitals, a trailing dot and a default
//! port (`:443`) name the same host as without them.

use std::net::IpAddr;

/// An `http` or `https` URL, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    pub https: bool,
    /// It carries `user[:password]@` before the host.
    pub userinfo: bool,
    /// The host in lower case, without a trailing dot, an IPv6 address without its brackets.
    pub host: String,
    /// The port, or the scheme's default.
    pub port: u16,
    /// The path (and query), `""` for none.
    pub path: String,
}

/// Why a text is not a URL zero can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlError {
    /// It does not start with `http://` or `https://`.
    Scheme,
    NoHost,
    /// Its host holds a space or a control character.
    HostCharacters,
    /// `[` without its `]`.
    Ipv6Unclosed,
    /// Between the brackets is no IPv6 address (what is there).
    NotIpv6(String),
    /// Something else than `:port` follows `[...]`.
    AfterIpv6,
    /// What follows the last `:` is no port number.
    Port(String),
}

impl std::fmt::Display for UrlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UrlError::Scheme => f.write_str("it does not start with http:// or https://"),
            UrlError::NoHost => f.write_str("it names no host"),
            UrlError::HostCharacters => {
                f.write_str("its host holds a space or a control character")
            }
            UrlError::Ipv6Unclosed => f.write_str("its IPv6 address has no closing bracket"),
            UrlError::NotIpv6(host) => write!(f, "[{host}] is no IPv6 address"),
            UrlError::AfterIpv6 => f.write_str("something follows its IPv6 address"),
            UrlError::Port(port) => write!(f, "its port {port:?} is no port"),
        }
    }
}

impl std::error::Error for UrlError {}

impl Url {
    /// Parses `http(s)://[userinfo@]host[:port][/path]`; anything else is an error saying why.
    pub fn parse(text: &str) -> Result<Url, UrlError> {
        let text = text.trim();
        let (https, rest) = if let Some(rest) = strip_prefix_ignore_case(text, "https://") {
            (true, rest)
        } else if let Some(rest) = strip_prefix_ignore_case(text, "http://") {
            (false, rest)
        } else {
            return Err(UrlError::Scheme);
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(end);
        // The last `@` ends the userinfo: a password may hold `@` only encoded, and a host
        // never holds one.
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((_, hostport)) => (true, hostport),
            None => (false, authority),
        };
        let (host, port) = split_port(hostport)?;
        let host = host.to_ascii_lowercase();
        let host = host.strip_suffix('.').unwrap_or(&host).to_string();
        if host.is_empty() {
            return Err(UrlError::NoHost);
        }
        if host.contains(|c: char| c.is_whitespace() || c.is_control()) {
            return Err(UrlError::HostCharacters);
        }
        let port = match port {
            Some(port) => port,
            None if https => 443,
            None => 80,
        };
        Ok(Url { https, userinfo, host, port, path: path.to_string() })
    }

    /// The host is this machine: `localhost` or a loopback address (`127.0.0.0/8`, `::1`,
    /// and `::ffff:127.x.y.z`).
    pub fn is_loopback(&self) -> bool {
        if self.host == "localhost" {
            return true;
        }
        match self.host.parse::<IpAddr>() {
            Ok(IpAddr::V4(ip)) => ip.is_loopback(),
            Ok(IpAddr::V6(ip)) => {
                ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
            }
            Err(_) => false,
        }
    }

    /// Whether this is `https://<host>` on the default port, the way a vendor serves its API.
    pub fn is_https_host(&self, host: &str) -> bool {
        self.https && self.port == 443 && self.host == host
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &text[prefix.len()..])
}

/// `host[:port]`, where the host may be an IPv6 literal in brackets.
fn split_port(hostport: &str) -> Result<(&str, Option<u16>), UrlError> {
    let (host, port) = if let Some(rest) = hostport.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or(UrlError::Ipv6Unclosed)?;
        if host.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(UrlError::NotIpv6(host.to_string()));
        }
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':').ok_or(UrlError::AfterIpv6)?)),
        }
    } else {
        match hostport.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (hostport, None),
        }
    };
    let port = match port {
        None | Some("") => None,
        Some(port) => Some(port.parse::<u16>().map_err(|_| UrlError::Port(port.to_string()))?),
    };
    Ok((host, port))
}

/// The proxies of the environment (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, each also in
/// lower case, and `NO_PROXY`), read once with the rest of the configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Proxies {
    pub https: Option<String>,
    pub http: Option<String>,
    pub all: Option<String>,
    /// `NO_PROXY` entries, lower case.
    pub no_proxy: Vec<String>,
}

impl Proxies {
    /// The proxy a request to `url` goes through, if any. Loopback hosts never go through a
    /// proxy (as Go's HTTP client decides), nor hosts `NO_PROXY` names. An `https` URL takes
    /// `HTTPS_PROXY`, then `ALL_PROXY`, then `HTTP_PROXY`; an `http` URL `HTTP_PROXY`, then
    /// `ALL_PROXY`.
    pub fn for_url(&self, url: &str) -> Option<&str> {
        let url = Url::parse(url).ok()?;
        if url.is_loopback() || self.bypassed(&url) {
            return None;
        }
        let order = if url.https {
            [&self.https, &self.all, &self.http]
        } else {
            [&self.http, &self.all, &None]
        };
        order.into_iter().flatten().next().map(String::as_str)
    }

    /// Whether `NO_PROXY` names the host: `*`; the host itself or a domain above it
    /// (`example.com` and `.example.com` cover `api.example.com`); an address or a range
    /// (`10.0.0.0/8`); any of these with `:port` for that port only.
    fn bypassed(&self, url: &Url) -> bool {
        self.no_proxy.iter().any(|entry| {
            let entry = entry.trim();
            if entry == "*" {
                return true;
            }
            let (name, port) = match split_port(entry) {
                Ok((name, port)) if !entry.contains('/') => (name, port),
                _ => (entry, None),
            };
            if port.is_some_and(|p| p != url.port) {
                return false;
            }
            if let Some((net, bits)) = name.split_once('/') {
                return in_range(&url.host, net, bits);
            }
            let name = name.trim_start_matches("*.").trim_start_matches('.');
            let name = name.strip_suffix('.').unwrap_or(name);
            !name.is_empty()
                && (url.host == name
                    || url.host.strip_suffix(name).is_some_and(|head| head.ends_with('.')))
        })
    }
}

/// Whether an address is in the range `net/bits`.
fn in_range(host: &str, net: &str, bits: &str) -> bool {
    let (Ok(ip), Ok(net), Ok(bits)) =
        (host.parse::<IpAddr>(), net.parse::<IpAddr>(), bits.parse::<u32>())
    else {
        return false;
    };
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) if bits <= 32 => {
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) if bits <= 128 => {
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_what_a_parse_says_they_are() {
        // (url, host, port, loopback)
        let cases = [
            ("http://localhost:11434/v1", "localhost", 11434, true),
            ("http://LOCALHOST./v1", "localhost", 80, true),
            ("http://127.0.0.1:8080", "127.0.0.1", 8080, true),
            ("http://127.8.9.10", "127.8.9.10", 80, true),
            ("http://[::1]:8000/v1", "::1", 8000, true),
            ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1", 80, true),
            ("http://localhost:1@attacker.example", "attacker.example", 80, false),
            ("http://user:pa:ss@attacker.example:8080/x", "attacker.example", 8080, false),
            ("http://127.0.0.1.attacker.example", "127.0.0.1.attacker.example", 80, false),
            ("http://localhost.attacker.example/", "localhost.attacker.example", 80, false),
            ("http://attacker.example/127.0.0.1", "attacker.example", 80, false),
            ("http://attacker.example?h=localhost", "attacker.example", 80, false),
            ("http://attacker.example#@localhost", "attacker.example", 80, false),
            ("http://[::2]:1", "::2", 1, false),
            ("http://128.0.0.1", "128.0.0.1", 80, false),
            ("https://API.OpenAI.com:443/v1", "api.openai.com", 443, false),
            ("https://api.openai.com./v1", "api.openai.com", 443, false),
            ("HTTPS://api.anthropic.com", "api.anthropic.com", 443, false),
        ];
        for (text, host, port, loopback) in cases {
            let url = Url::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(
                (url.host.as_str(), url.port, url.is_loopback()),
                (host, port, loopback),
                "{text}"
            );
        }
        assert!(Url::parse("https://user@api.openai.com/v1").unwrap().userinfo);
        for bad in [
            "ftp://x",
            "http://",
            "http://:80",
            "http://[::1",
            "http://h:99999",
            "http://h:x",
            "http://a b",
        ] {
            assert!(Url::parse(bad).is_err(), "{bad} parsed");
        }
    }

    #[test]
    fn a_vendor_host_is_https_on_its_default_port_whatever_the_spelling() {
        let official = |text: &str| Url::parse(text).unwrap().is_https_host("api.openai.com");
        for yes in [
            "https://api.openai.com/v1",
            "https://API.OPENAI.COM:443/v1/",
            "https://api.openai.com./v1",
        ] {
            assert!(official(yes), "{yes}");
        }
        for no in [
            "http://api.openai.com/v1",
            "https://api.openai.com:8443/v1",
            "https://api.openai.com.evil.example/v1",
            "https://evil.example/api.openai.com",
            "https://api.openai.com@evil.example/v1",
        ] {
            assert!(!official(no), "{no}");
        }
    }

    #[test]
    fn loopback_never_goes_through_the_proxy_and_no_proxy_is_honoured() {
        let proxies = Proxies {
            https: Some("http://secure-proxy:3128".into()),
            http: Some("http://proxy:3128".into()),
            all: None,
            no_proxy: vec![
                "internal.example".into(),
                ".corp".into(),
                "10.0.0.0/8".into(),
                "gw.example:8443".into(),
            ],
        };
        let cases = [
            ("http://localhost:11434/v1", None),
            ("http://127.0.0.1:8080/v1", None),
            ("http://[::1]:8000", None),
            ("http://LocalHost.:4000", None),
            ("https://api.openai.com/v1", Some("http://secure-proxy:3128")),
            ("http://ollama.example:11434/v1", Some("http://proxy:3128")),
            ("http://localhost:1@attacker.example", Some("http://proxy:3128")),
            ("http://127.0.0.1.attacker.example", Some("http://proxy:3128")),
            ("https://internal.example/v1", None),
            ("https://api.internal.example/v1", None),
            ("https://notinternal.example/v1", Some("http://secure-proxy:3128")),
            ("http://llm.corp/v1", None),
            ("http://10.1.2.3:8000/v1", None),
            ("http://11.1.2.3:8000/v1", Some("http://proxy:3128")),
            ("https://gw.example:8443/v1", None),
            ("https://gw.example/v1", Some("http://secure-proxy:3128")),
        ];
        for (url, proxy) in cases {
            assert_eq!(proxies.for_url(url), proxy, "{url}");
        }
        let all = Proxies { all: Some("socks5://all:1080".into()), ..Proxies::default() };
        assert_eq!(all.for_url("https://api.anthropic.com"), Some("socks5://all:1080"));
        let star = Proxies { no_proxy: vec!["*".into()], ..proxies };
        assert_eq!(star.for_url("https://api.openai.com/v1"), None);
    }
}
