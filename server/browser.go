package server

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// Defences against the operator's own web browser. A keyless server on loopback treats every
// caller as an admin, and a browser will send requests there on behalf of any page it shows:
//
//   - A cross-site "simple" request (a POST of text/plain, form-urlencoded or multipart, which
//     needs no CORS preflight) reaches the handler even though the page cannot read the answer.
//     refuseCrossSite refuses state-changing requests that a browser marks as coming from
//     another origin, and requireJSON makes the JSON endpoints need a content type that no page
//     can send to another origin without a preflight.
//   - DNS rebinding (evil.example first resolving to the attacker, then to 127.0.0.1) makes the
//     attacker's page same-origin with the API, so the browser's own checks pass; the Host header
//     still says evil.example. loopbackHost refuses such names when there are no keys to
//     protect the server.
//
// Pages that should call the API are named explicitly (Options.CORSOrigins): their preflights
// are answered and their requests pass refuseCrossSite. Clients that are not browsers (curl, the
// SDKs) send neither Origin nor Sec-Fetch-Site and pass untouched.

// browserGuard is the compiled browser policy of a Server.
type browserGuard struct {
	origins map[string]bool // allowed CORS origins, normalised as browsers send them
	cop     *http.CrossOriginProtection
	cors    echo.MiddlewareFunc // nil when no origin is allowed: CORS is off
}

// corsAllowHeaders are the request headers an allowed page may send: the API key headers, JSON,
// SSE resumption and the MCP session headers.
var corsAllowHeaders = []string{"Accept", "Authorization", "Content-Type", "X-API-Key", "X-Request-ID",
	"Last-Event-ID", "Mcp-Session-Id", "Mcp-Protocol-Version"}

// corsExposeHeaders are the response headers an allowed page may read.
var corsExposeHeaders = []string{"X-Request-ID", "Retry-After", "WWW-Authenticate", "Mcp-Session-Id", warningHeader}

func newBrowserGuard(origins []string) (*browserGuard, error) {
	g := &browserGuard{origins: map[string]bool{}, cop: http.NewCrossOriginProtection()}
	for i, o := range origins {
		n, err := ParseOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("server: Options.CORSOrigins[%d] %q: %w", i, o, err)
		}
		if err := g.cop.AddTrustedOrigin(n); err != nil {
			return nil, fmt.Errorf("server: Options.CORSOrigins[%d] %q: %w", i, o, err)
		}
		g.origins[n] = true
	}
	if len(g.origins) > 0 {
		g.cors = middleware.CORSWithConfig(middleware.CORSConfig{
			// Exact matches only: echo's AllowOrigins would also read "*" and "?" as wildcards.
			AllowOriginFunc: func(origin string) (bool, error) { return g.origins[origin], nil },
			AllowMethods:    []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete},
			AllowHeaders:    corsAllowHeaders,
			ExposeHeaders:   corsExposeHeaders,
			// No credentials: the API never uses cookies; keys travel in headers.
			MaxAge: 600,
		})
	}
	return g, nil
}

// ParseOrigin checks that o is a web origin, scheme://host[:port], as Options.CORSOrigins takes
// it, and returns it as a browser writes it in the Origin header (lower case, no default port),
// so that matching can be exact. "*" and "null" are refused: "*" would let every page in the
// operator's browser drive the API, and "null" is the origin of any sandboxed frame or local file.
func ParseOrigin(o string) (string, error) {
	const form = "an origin is scheme://host[:port], for example http://localhost:3000"
	switch strings.TrimSpace(o) {
	case "*":
		return "", fmt.Errorf("wildcards are not allowed: every web page could then run and change skills; list each origin (%s)", form)
	case "null":
		return "", fmt.Errorf(`"null" is the origin of any sandboxed frame or local file, so it is not allowed; serve the page from an origin (%s)`, form)
	}
	u, err := url.Parse(o)
	if err != nil {
		return "", fmt.Errorf("%s: %w", form, err)
	}
	if u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("no scheme or host: %s", form)
	}
	if u.User != nil || u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.HasSuffix(o, "#") {
		return "", fmt.Errorf("no user, path (not even \"/\"), query or fragment: %s", form)
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if strings.HasSuffix(u.Host, ":") {
		return "", fmt.Errorf("empty port: %s", form)
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("port %q is not 1 to 65535: %s", port, form)
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return "", fmt.Errorf("an IPv6 zone is never part of an origin: %s", form)
		}
		if ip.Is6() {
			host = "[" + ip.String() + "]"
		} else {
			host = ip.String()
		}
	} else if !validHostname(host) {
		return "", fmt.Errorf("host %q is not a host name (letters, digits, '-' and '.'; write an international name in its xn-- form): %s", host, form)
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, nil
}

func validHostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// isLoopbackHost reports whether a Host header names this machine's loopback: localhost or a
// name under .localhost (browsers resolve those to loopback themselves, never through DNS),
// 127.0.0.0/8 or ::1, with or without a port.
func isLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		host = hostport[1 : len(hostport)-1]
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// loopbackHost refuses, on a server without API keys, a request addressed to a name that is not
// loopback: that is a DNS-rebinding page, or a client that reached a keyless server it should
// not. With keys, the keys protect the server and any Host is served.
func (s *Server) loopbackHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if len(s.keys) > 0 || isLoopbackHost(c.Request().Host) {
			return next(c)
		}
		return httpError(http.StatusMisdirectedRequest, "misdirected_request",
			"Host %q is not a loopback name: this server has no API keys, so it answers only requests addressed to "+
				"localhost, 127.0.0.1 or [::1] (a web page under another name that resolves here is how DNS rebinding "+
				"reaches a local server). Connect through a loopback name, or configure API keys (skillbox serve --keys FILE)",
			c.Request().Host)
	}
}

// refuseCrossSite refuses a request that may change state or run something (any method but GET,
// HEAD and OPTIONS) when a browser sent it from another origin: Sec-Fetch-Site other than
// same-origin or none, or, from browsers without Sec-Fetch-Site, an Origin whose scheme and host
// are not the request's own. Origins in Options.CORSOrigins pass. net/http's
// CrossOriginProtection does the checks; it compares the Origin's host only, so the scheme is
// checked here too.
func (s *Server) refuseCrossSite(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
			return next(c)
		}
		err := s.browser.cop.Check(r)
		origin := r.Header.Get(echo.HeaderOrigin)
		if err == nil && origin != "" && r.Header.Get("Sec-Fetch-Site") == "" && !s.browser.origins[origin] &&
			!strings.HasPrefix(strings.ToLower(origin), c.Scheme()+"://") {
			err = fmt.Errorf("the Origin's scheme is not %s", c.Scheme())
		}
		if err == nil {
			return next(c)
		}
		site := r.Header.Get("Sec-Fetch-Site")
		if site == "" {
			site = "absent"
		}
		return httpError(http.StatusForbidden, "cross_site",
			"cross-site %s refused: a page from Origin %q (Sec-Fetch-Site: %s) may not run or change skills on %s. "+
				"Clients other than browsers send neither header and are not affected; to let pages from an origin of "+
				"yours call this API, allow it (skillbox serve --cors-origin ORIGIN)",
			r.Method, origin, site, r.Host)
	}
}

// requireJSON refuses a body that is not JSON by its Content-Type (application/json or
// application/*+json, parameters allowed) with 415, even an empty one: a page can POST
// text/plain or a form to another origin without a preflight, never JSON.
func requireJSON(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ct := c.Request().Header.Get(echo.HeaderContentType)
		if isJSONType(ct) {
			return next(c)
		}
		got := "none"
		if ct != "" {
			got = strconv.Quote(ct)
		}
		return httpError(http.StatusUnsupportedMediaType, "unsupported_media_type",
			"%s %s takes a JSON body: send Content-Type: application/json (curl --json '{...}' sets it); the Content-Type was %s",
			c.Request().Method, c.Request().URL.Path, got)
	}
}

func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	sub, ok := strings.CutPrefix(mt, "application/")
	return ok && (sub == "json" || (strings.HasSuffix(sub, "+json") && len(sub) > len("+json")))
}
