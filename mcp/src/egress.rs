//! Where `gate_pay` may send a request. A model chooses the URL, so the server must not become
//! a way into the network it runs in (SSRF): loopback, private, link-local and other
//! non-public addresses are refused unless the operator allows them (`MCP_PAY_ALLOW`; the
//! local demo is allowed when the server runs against a localnet).
//!
//! The check holds for every connection, not just the first look: the HTTP client resolves
//! names through [`GuardedResolver`], which refuses a non-public address the same way (a name
//! that resolves to a public address when checked and to a private one when connecting gains
//! nothing), follows no redirect and uses no proxy.

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::Url;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// One entry of the allow list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Allowed {
    /// A host name or address, on any port or on one (`localhost:4021`, `10.0.0.5`).
    Host { host: String, port: Option<u16> },
    /// Every address of a network (`10.0.0.0/8`, `fd00::/8`).
    Net { addr: IpAddr, prefix: u8 },
}

impl Allowed {
    /// Parses `HOST`, `HOST:PORT`, `[V6]:PORT` or `ADDR/PREFIX`.
    pub fn parse(entry: &str) -> Result<Allowed, String> {
        let e = entry.trim();
        if e.is_empty() {
            return Err("an empty entry".into());
        }
        if let Some((addr, prefix)) = e.split_once('/') {
            let addr: IpAddr = addr
                .parse()
                .map_err(|_| format!("{e:?}: {addr:?} is not an IP address"))?;
            let most = if addr.is_ipv4() { 32 } else { 128 };
            let prefix: u8 = prefix
                .parse()
                .ok()
                .filter(|p| *p <= most)
                .ok_or_else(|| format!("{e:?}: the prefix must be 0..={most}"))?;
            return Ok(Allowed::Net { addr, prefix });
        }
        if let Ok(ip) = e.parse::<IpAddr>() {
            return Ok(Allowed::Host {
                host: ip.to_string(),
                port: None,
            });
        }
        // A URL parser reads host and port the way requests will (a scheme without a default
        // port, so that `:80` stays explicit).
        let url = Url::parse(&format!("allow://{e}/"))
            .map_err(|_| format!("{e:?}: expected HOST, HOST:PORT or ADDR/PREFIX"))?;
        let host = host_of(&url).ok_or_else(|| format!("{e:?}: no host"))?;
        if url.path() != "/" || !url.username().is_empty() {
            return Err(format!("{e:?}: expected HOST, HOST:PORT or ADDR/PREFIX"));
        }
        Ok(Allowed::Host {
            host,
            port: url.port(),
        })
    }

    fn allows_ip(&self, ip: IpAddr) -> bool {
        match self {
            Allowed::Net { addr, prefix } => in_net(ip, *addr, *prefix),
            Allowed::Host { .. } => false,
        }
    }

    fn allows_host(&self, host: &str, port: Option<u16>) -> bool {
        match self {
            Allowed::Host { host: h, port: p } => {
                h.eq_ignore_ascii_case(host) && (p.is_none() || port.is_none() || *p == port)
            }
            Allowed::Net { .. } => false,
        }
    }
}

/// The host of a URL as the allow list names it (an IPv6 address without brackets).
fn host_of(url: &Url) -> Option<String> {
    match url.host()? {
        url::Host::Domain(d) => Some(d.to_ascii_lowercase()),
        url::Host::Ipv4(ip) => Some(ip.to_string()),
        url::Host::Ipv6(ip) => Some(ip.to_string()),
    }
}

fn in_net(ip: IpAddr, net: IpAddr, prefix: u8) -> bool {
    let ip = canonical(ip);
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// An IPv4 address carried in IPv6 (mapped `::ffff:a.b.c.d`, SIIT's translated
/// `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, or 6to4 `2002:AABB:CCDD::`) as the IPv4
/// address it reaches. The other forms are refused by [`public_v6`]: IPv4-compatible
/// `::a.b.c.d` (deprecated), NAT64's prefix in another layout, local-use NAT64 and Teredo.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return IpAddr::V4(v4);
            }
            let s = v6.segments();
            let o = v6.octets();
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] || s[..6] == [0, 0, 0, 0, 0xffff, 0] {
                return IpAddr::V4(Ipv4Addr::new(o[12], o[13], o[14], o[15]));
            }
            if s[0] == 0x2002 {
                return IpAddr::V4(Ipv4Addr::new(o[2], o[3], o[4], o[5]));
            }
            ip
        }
        v4 => v4,
    }
}

/// Whether `ip` is an address of the public internet: not loopback, private, link-local,
/// shared (CGNAT), unspecified, broadcast, multicast, documentation, benchmarking or reserved.
pub fn is_public(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(v4) => public_v4(v4),
        IpAddr::V6(v6) => public_v6(v6),
    }
}

fn public_v4(ip: Ipv4Addr) -> bool {
    let o = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || o[0] == 0
        // 100.64.0.0/10: shared address space (carrier-grade NAT).
        || (o[0] == 100 && (o[1] & 0xc0) == 64)
        // 192.0.0.0/24: IETF protocol assignments.
        || (o[0] == 192 && o[1] == 0 && o[2] == 0)
        // 198.18.0.0/15: benchmarking.
        || (o[0] == 198 && (o[1] & 0xfe) == 18)
        // 240.0.0.0/4: reserved.
        || o[0] >= 240)
}

fn public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    // Only 2000::/3, global unicast, is routed on the internet (IANA has allocated nothing
    // outside it). That leaves out loopback, unspecified, ::/8 (IPv4-compatible ::/96, NAT64's
    // 64:ff9b::/32 in a layout other than the /96 mapped above, local-use NAT64
    // 64:ff9b:1::/48), 100::/64 (discard), fc00::/7 (unique local), fe80::/10 (link-local),
    // fec0::/10 (the former site-local), ff00::/8 (multicast) and what is unassigned.
    (s[0] & 0xe000) == 0x2000
        && !(
            // 2001:db8::/32 and 3fff::/20: documentation.
            (s[0] == 0x2001 && s[1] == 0x0db8)
            || (s[0] == 0x3fff && s[1] < 0x1000)
            // 2001:2::/48: benchmarking.
            || s[..3] == [0x2001, 2, 0]
            // 2001::/32: Teredo (the IPv4 it reaches is obscured).
            || (s[0] == 0x2001 && s[1] == 0)
        )
}

/// The allow list and the limits of `gate_pay`'s requests.
#[derive(Clone, Debug)]
pub struct Egress {
    pub allow: Arc<Vec<Allowed>>,
    /// How long one HTTP request may take, connecting included.
    pub timeout: Duration,
    /// The most bytes of an answer's body read.
    pub max_response_bytes: usize,
}

/// A URL that may be requested: where it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub url: Url,
    /// `scheme://host:port`: a session's channel is kept per origin.
    pub origin: String,
}

/// Why a URL may not be requested.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EgressError {
    /// The URL itself is not one to request (`url` is the argument named).
    #[error("invalid url: {0}")]
    Invalid(String),
    /// Its host is, or resolves to, an address this server may not reach.
    #[error("{0}; nothing was requested")]
    Refused(String),
    /// The HTTP client could not be built.
    #[error("the HTTP client: {0}")]
    Client(String),
}

fn refused(url: &str, why: impl std::fmt::Display) -> EgressError {
    EgressError::Refused(format!("{url}: {why}"))
}

fn invalid(why: impl std::fmt::Display) -> EgressError {
    EgressError::Invalid(why.to_string())
}

impl Egress {
    /// Whether the host of a request may be `ip` (an address of the URL, or a name's).
    fn allows_ip(&self, host: &str, port: Option<u16>, ip: IpAddr) -> bool {
        is_public(ip)
            || self
                .allow
                .iter()
                .any(|a| a.allows_ip(ip) || a.allows_host(host, port))
    }

    /// Checks `url` before anything is sent: an `http` or `https` URL without credentials,
    /// whose host is (or resolves only to) addresses this server may reach.
    pub async fn check(&self, url: &str) -> Result<Target, EgressError> {
        let parsed = Url::parse(url).map_err(invalid)?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(invalid(format!(
                "{:?} is not http or https",
                parsed.scheme()
            )));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(invalid(
                "credentials in the URL are not sent; pass them in headers",
            ));
        }
        let host = host_of(&parsed).ok_or_else(|| invalid("no host"))?;
        let port = parsed.port_or_known_default();
        let addrs: Vec<IpAddr> = match parsed.host() {
            Some(url::Host::Ipv4(ip)) => vec![IpAddr::V4(ip)],
            Some(url::Host::Ipv6(ip)) => vec![IpAddr::V6(ip)],
            _ => tokio::time::timeout(
                self.timeout,
                tokio::net::lookup_host((host.as_str(), port.unwrap_or(0))),
            )
            .await
            .map_err(|_| refused(url, format!("{host} did not resolve in time")))?
            .map_err(|e| refused(url, format!("{host} does not resolve ({e})")))?
            .map(|a| a.ip())
            .collect(),
        };
        if addrs.is_empty() {
            return Err(refused(url, format!("{host} resolves to no address")));
        }
        if let Some(ip) = addrs.iter().find(|ip| !self.allows_ip(&host, port, **ip)) {
            return Err(refused(
                url,
                format!("{host} is {ip}, a loopback, private, link-local or otherwise non-public address this server is not allowed to reach"),
            ));
        }
        let origin = format!(
            "{}://{}:{}",
            parsed.scheme(),
            parsed.host_str().unwrap_or_default(),
            port.unwrap_or_default()
        );
        Ok(Target {
            url: parsed,
            origin,
        })
    }

    /// The HTTP client of one `gate_pay` call: names resolved through the guard, no
    /// redirect followed, no proxy, the timeout.
    pub fn client(&self) -> Result<reqwest::Client, EgressError> {
        reqwest::Client::builder()
            .dns_resolver(Arc::new(GuardedResolver {
                egress: self.clone(),
            }))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(self.timeout)
            .connect_timeout(self.timeout)
            .build()
            .map_err(|e| EgressError::Client(e.to_string()))
    }
}

/// Resolves a name as the system does, then refuses it when any of its addresses is one the
/// allow list does not let the server reach.
struct GuardedResolver {
    egress: Egress,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let egress = self.egress.clone();
        Box::pin(async move {
            let host = name.as_str().to_ascii_lowercase();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            // The port is not known here; a host allowed on one port only was checked with
            // its port before the request, and no redirect is followed.
            if let Some(a) = addrs
                .iter()
                .find(|a| !egress.allows_ip(&host, None, a.ip()))
            {
                let e: Box<dyn std::error::Error + Send + Sync> = format!(
                    "{host} resolves to {}, which this server may not reach",
                    a.ip()
                )
                .into();
                return Err(e);
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn egress(allow: &[&str]) -> Egress {
        Egress {
            allow: Arc::new(allow.iter().map(|a| Allowed::parse(a).unwrap()).collect()),
            timeout: Duration::from_secs(5),
            max_response_bytes: 1 << 20,
        }
    }

    #[test]
    fn non_public_addresses_are_named_as_such() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "192.0.2.1",
            "198.18.0.1",
            "240.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
            "::127.0.0.1",
            "2002:a9fe:a9fe::1",
            "2002:7f00:1::",
            "2001:0:4136:e378::1",
            "64:ff9b:1::a00:1",
            // SIIT's IPv4-translated ::ffff:0:0:0/96, mapped to the IPv4 it carries.
            "::ffff:0:127.0.0.1",
            "::ffff:0:10.0.0.1",
            "::ffff:0:169.254.169.254",
            // IPv4-compatible ::/96 (deprecated), refused whatever it carries.
            "::10.0.0.1",
            "::1.1.1.1",
            // NAT64's well-known prefix: private targets, and 64:ff9b::/32 in any layout but
            // the /96 one (RFC 6052's others are for an operator's own prefix).
            "64:ff9b::7f00:1",
            "64:ff9b::c0a8:101",
            "64:ff9b:101:101::",
            "64:ff9b:0:0:1:101:101:0",
            "64:ff9b:1:101:101::",
            // 6to4 of private targets, and Teredo of a public server.
            "2002:a00:1::1",
            "2002:c0a8:101::1",
            "2001:0:101:101::1",
            // Outside 2000::/3 (global unicast) nothing is public; inside it, documentation
            // and benchmarking are not.
            "1::1",
            "4000::1",
            "3fff::1",
            "2001:2::1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip} counted as public");
        }
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:1.1.1.1",
            "2002:101:101::1",
            "2a00:1450:4001::1",
            // A public IPv4 through the other forms mapped (::ffff: and 2002: above).
            "::ffff:0:1.1.1.1",
            "64:ff9b::101:101",
        ] {
            assert!(is_public(ip.parse().unwrap()), "{ip} counted as non-public");
        }
    }

    #[test]
    fn allow_entries_parse_and_match() {
        assert_eq!(
            Allowed::parse("LocalHost:4021").unwrap(),
            Allowed::Host {
                host: "localhost".into(),
                port: Some(4021)
            }
        );
        assert_eq!(
            Allowed::parse("[::1]:80").unwrap(),
            Allowed::Host {
                host: "::1".into(),
                port: Some(80)
            }
        );
        assert!(Allowed::parse("10.0.0.0/33").is_err());
        assert!(Allowed::parse("").is_err());
        assert!(Allowed::parse("a/b/c").is_err());
        assert!(Allowed::parse("host/path").is_err());
        let net = Allowed::parse("10.0.0.0/8").unwrap();
        assert!(net.allows_ip("10.9.8.7".parse().unwrap()));
        assert!(net.allows_ip("::ffff:10.9.8.7".parse().unwrap()));
        assert!(!net.allows_ip("11.0.0.1".parse().unwrap()));
        let host = Allowed::parse("127.0.0.1:4021").unwrap();
        assert!(host.allows_host("127.0.0.1", Some(4021)));
        assert!(!host.allows_host("127.0.0.1", Some(4020)));
    }

    #[tokio::test]
    async fn urls_to_non_public_hosts_are_refused_unless_allowed() {
        let none = egress(&[]);
        for url in [
            "http://127.0.0.1:4021/protected",
            "http://[::1]/",
            "http://169.254.169.254/latest/meta-data/",
            "http://10.0.0.1/",
            "http://localhost:4021/",
            "http://0x7f000001/",
        ] {
            let e = none.check(url).await.unwrap_err();
            assert!(matches!(e, EgressError::Refused(_)), "{url}: {e:?}");
        }
        for url in [
            "ftp://example.com/",
            "http://user:pw@example.com/",
            "not a url",
        ] {
            let e = none.check(url).await.unwrap_err();
            assert!(matches!(e, EgressError::Invalid(_)), "{url}: {e:?}");
        }
        let demo = egress(&["127.0.0.1:4021"]);
        let t = demo.check("http://127.0.0.1:4021/protected").await.unwrap();
        assert_eq!(t.origin, "http://127.0.0.1:4021");
        assert!(demo.check("http://127.0.0.1:4020/").await.is_err());
        let net = egress(&["127.0.0.0/8"]);
        assert!(net.check("http://127.0.0.2:9/").await.is_ok());
    }

    #[tokio::test]
    async fn the_client_refuses_a_non_public_name_when_it_connects() {
        // The check is bypassed here on purpose: the connection itself is refused.
        let e = egress(&[]);
        let err = e
            .client()
            .unwrap()
            .get("http://localhost:9/")
            .send()
            .await
            .unwrap_err();
        let chain = format!("{:?}", err);
        assert!(chain.contains("may not reach"), "{chain}");
    }
}
