package hostfuncs

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
)

// FetchRequest is an HTTP request a skill asks the host to make. Its JSON form (without Body) is
// the request head of every guest ABI that carries requests as JSON (docs/abi.md §4).
type FetchRequest struct {
	// Method is GET when empty; one of GET HEAD POST PUT PATCH DELETE OPTIONS.
	Method string `json:"method"`
	// URL is http or https, without user info, on the run's network grant.
	URL string `json:"url"`
	// Headers are names to single values; the transport's own headers and those of granted
	// secrets are refused.
	Headers map[string]string `json:"headers"`
	// Body is the raw request body, nil for none.
	Body []byte `json:"-"`
}

// FetchResponse is the answer to a FetchRequest. Its JSON form (without Body) is the response
// head of the guest ABIs.
type FetchResponse struct {
	Status int `json:"status"`
	// URL is the final URL, after redirects.
	URL string `json:"url"`
	// Headers are lower-case names; repeated headers are joined with ", ".
	Headers map[string]string `json:"headers"`
	Body    []byte            `json:"-"`
}

// DecodeFetchRequest reads a request head in its JSON form, refusing unknown fields: a typo in a
// field name must not silently send a different request.
func DecodeFetchRequest(head []byte) (FetchRequest, error) {
	var req FetchRequest
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, refuse(StatusInvalid, "the request is not valid JSON: %v", err)
	}
	return req, nil
}

const maxRedirects = 5

var fetchMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// Headers the guest may not set: they are the transport's business, and letting a guest set them
// invites request smuggling or a Host that differs from the checked URL.
var reservedHeaders = map[string]bool{"Host": true, "Content-Length": true, "Transfer-Encoding": true,
	"Connection": true, "Upgrade": true, "Te": true, "Trailer": true, "Proxy-Authorization": true,
	"Proxy-Connection": true, "Keep-Alive": true}

// errDenied marks a refusal found inside the HTTP client (a redirect off the grant, a blocked
// address), so it can be answered DENIED rather than FAILED.
type deniedError struct{ msg string }

func (e *deniedError) Error() string { return e.msg }

// Fetch makes req on the run's behalf: the URL must be on the grant, every address dialled must
// pass the guard, within the run's fetch count, size and time limits; granted secrets are added
// on the way out, over https only.
//
// A traced run (a recording span in ctx) gets a span for the fetch, a child of it.
func (c *Call) Fetch(ctx context.Context, req FetchRequest) (*FetchResponse, error) {
	ctx, span := startFetch(ctx)
	resp, err := c.doFetch(ctx, req, span)
	span.end(resp, err)
	return resp, err
}

func (c *Call) doFetch(ctx context.Context, req FetchRequest, span *fetchSpan) (*FetchResponse, error) {
	body := req.Body
	if int64(len(body)) > c.Grant.Limits.MaxFetchBytes {
		return nil, refuse(StatusInvalid, "fetch: a request body of %d bytes is more than maxFetchBytes (%d)", len(body), c.Grant.Limits.MaxFetchBytes)
	}
	method := strings.ToUpper(req.Method)
	if method == "" {
		method = "GET"
	}
	if !contains(fetchMethods, method) {
		return nil, refuse(StatusInvalid, "method %q is not one of %s", escapeControl(req.Method), strings.Join(fetchMethods, " "))
	}
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, refuse(StatusInvalid, "bad URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, refuse(StatusInvalid, "%s: only http and https URLs are allowed", escapeControl(req.URL))
	}
	if u.User != nil {
		return nil, refuse(StatusInvalid, "URLs with user info are not allowed; use a header")
	}
	if u.Hostname() == "" {
		return nil, refuse(StatusInvalid, "%s: the URL has no host", escapeControl(req.URL))
	}
	span.target(method, u)
	if !c.Grant.Hosts.Match(u.Hostname(), portOf(u)) && !c.hostAllowed(ctx, u.Hostname(), portOf(u)) {
		what := fmt.Sprintf("%s: host %s is not on the grant", u.Redacted(), u.Host)
		c.deny("fetch " + what)
		span.deny("host " + u.Host + " is not on the grant")
		return nil, refuse(StatusDenied, "%s%s", what, hostList(c.Grant.Hosts))
	}

	timeout := c.Grant.Limits.FetchTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, refuse(StatusInvalid, "%v", err)
	}
	for k, v := range req.Headers {
		ck := http.CanonicalHeaderKey(k)
		if reservedHeaders[ck] || strings.HasPrefix(ck, "Proxy-") {
			return nil, refuse(StatusInvalid, "header %q is set by the host, not the skill", ck)
		}
		if !validHeader(k, v) {
			return nil, refuse(StatusInvalid, "header %q has an invalid name or value", escapeControl(k))
		}
		for _, sec := range c.Grant.Secrets {
			if strings.EqualFold(sec.Header, ck) && !c.carriesPlaceholder(sec, v) {
				return nil, refuse(StatusInvalid, "header %q carries the secret %s, which the host adds; do not set it (or set it with ctx.env's placeholder for %s, which the host fills in)", ck, sec.Name, sec.Name)
			}
		}
		hreq.Header.Set(ck, v)
	}
	if hreq.Header.Get("User-Agent") == "" {
		hreq.Header.Set("User-Agent", "skillbox/1 ("+ABIVersion+")")
	}
	// Count the fetch only now that it is well-formed: a refused request spends no quota.
	var over bool
	c.update(func(us *tally) {
		if int64(us.Fetches) >= c.Grant.Limits.MaxFetches {
			over = true
			return
		}
		us.Fetches++
	})
	if over {
		return nil, refuse(StatusLimit, "the run's maxFetches (%d) is used up", c.Grant.Limits.MaxFetches)
	}
	c.update(func(us *tally) { us.BytesOut += int64(len(body)) })
	span.bytesOut = len(body)

	// The transport notes here each secret it adds, on every hop, so the response can be cleaned
	// of them.
	inj := &injected{}
	hreq = hreq.WithContext(context.WithValue(hreq.Context(), injectedKey{}, inj))
	resp, err := c.client().Do(hreq)
	if err != nil {
		var de *deniedError
		var be *netguard.BlockedError
		switch {
		case errors.As(err, &de):
			c.deny("fetch " + u.Redacted() + ": " + de.msg)
			span.deny(de.msg)
			return nil, refuse(StatusDenied, "%s: %s", u.Redacted(), de.msg)
		case errors.As(err, &be):
			// The operator's record names the address; the guest is told the class only, so a
			// wildcard grant cannot be used to map which names resolve to internal addresses.
			c.deny("fetch " + u.Redacted() + ": " + be.Error())
			span.deny(be.Error())
			return nil, refuse(StatusDenied, "%s: %s", u.Redacted(), be.Redacted())
		case errors.Is(err, context.DeadlineExceeded):
			return nil, refuse(StatusFailed, "%s: timed out", u.Redacted())
		}
		return nil, refuse(StatusFailed, "%s: %v", u.Redacted(), stripURLError(err))
	}
	defer resp.Body.Close()
	span.code = resp.StatusCode
	max := c.Grant.Limits.MaxFetchBytes
	if method != "HEAD" && resp.ContentLength > max { // a HEAD's Content-Length describes no body
		return nil, refuse(StatusLimit, "%s: response of %d bytes is more than maxFetchBytes (%d)", u.Redacted(), resp.ContentLength, max)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	c.update(func(us *tally) { us.BytesIn += int64(len(data)) })
	if err != nil {
		return nil, refuse(StatusFailed, "%s: reading the response: %v", u.Redacted(), stripURLError(err))
	}
	if int64(len(data)) > max {
		return nil, refuse(StatusLimit, "%s: response is more than maxFetchBytes (%d)", u.Redacted(), max)
	}
	out := &FetchResponse{Status: resp.StatusCode, URL: resp.Request.URL.String(), Headers: map[string]string{}, Body: data}
	for k, vs := range resp.Header {
		out.Headers[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	inj.redact(out)
	return out, nil
}

// client builds the run's HTTP client once: no proxy, every connection checked by the guard after
// DNS, redirects checked against the grant, secrets added per hop by the transport.
func (c *Call) client() *http.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.httpClient != nil {
		return c.httpClient
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: c.Grant.Guard.Control}
	tr := &http.Transport{
		Proxy:                  nil, // never the host's HTTP_PROXY: it would bypass the guard
		DialContext:            dialer.DialContext,
		TLSClientConfig:        &tls.Config{RootCAs: c.Grant.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		DisableKeepAlives:      true,
		ForceAttemptHTTP2:      true,
	}
	c.httpClient = &http.Client{
		Transport: &secretTransport{call: c, next: tr},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return &deniedError{fmt.Sprintf("more than %d redirects", maxRedirects)}
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return &deniedError{fmt.Sprintf("redirect to a %s URL", req.URL.Scheme)}
			}
			// A redirect is not put to a person (its fetch's time is running): only what one
			// allowed before passes beside the grant.
			if !c.Grant.Hosts.Match(req.URL.Hostname(), portOf(req.URL)) && !c.hostAllowedBefore(req.URL.Hostname(), portOf(req.URL)) {
				return &deniedError{fmt.Sprintf("redirect to %s, which is not on the grant", req.URL.Host)}
			}
			if !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
				// Go keeps these for subdomains; a sandbox keeps them for the same host only.
				req.Header.Del("Authorization")
				req.Header.Del("Cookie")
			}
			return nil
		},
	}
	return c.httpClient
}

// secretTransport adds granted secrets to each https request (each redirect hop too) whose host
// the secret lists, and records the hosts contacted. Never over plain http, where anyone on the
// path could read them. It works on a clone: the client's copy of the request, which redirects
// start from, never holds a secret.
type secretTransport struct {
	call *Call
	next http.RoundTripper
}

// injected collects the secrets added to one fetch's requests.
type injected struct {
	mu      sync.Mutex
	secrets []Secret
}

type injectedKey struct{}

func (in *injected) add(s Secret) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, have := range in.secrets {
		if have.Name == s.Name {
			return
		}
	}
	in.secrets = append(in.secrets, s)
}

// redacted replaces a secret a response carries back.
const redacted = "[redacted]"

// minRedactBytes: a value shorter than this would match innocent bytes everywhere; a secret that
// short protects nothing anyway.
const minRedactBytes = 4

// redact replaces, in the response's URL, headers and body, every secret this fetch sent: its
// formatted header value and its raw value. What a host transforms before echoing it (base64,
// a hash, split across headers) cannot be recognised and is not redacted.
func (in *injected) redact(resp *FetchResponse) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, s := range in.secrets {
		for _, v := range []string{s.Value, s.Raw} {
			if len(v) < minRedactBytes {
				continue
			}
			resp.URL = strings.ReplaceAll(resp.URL, v, redacted)
			for k, hv := range resp.Headers {
				resp.Headers[k] = strings.ReplaceAll(hv, v, redacted)
			}
			if bytes.Contains(resp.Body, []byte(v)) {
				resp.Body = bytes.ReplaceAll(resp.Body, []byte(v), []byte(redacted))
				if _, ok := resp.Headers["content-length"]; ok {
					resp.Headers["content-length"] = strconv.Itoa(len(resp.Body))
				}
			}
		}
	}
}

func (t *secretTransport) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	defer func() {
		var be *netguard.BlockedError
		if !errors.As(err, &be) { // a refused address was never contacted
			t.call.contacted(req.URL.Host)
		}
	}()
	var clone *http.Request
	for _, s := range t.call.Grant.Secrets {
		if req.URL.Scheme == "https" && s.Hosts.Match(req.URL.Hostname(), portOf(req.URL)) {
			if clone == nil {
				clone = req.Clone(req.Context())
			}
			clone.Header.Set(s.Header, t.call.secretValue(s, req.Header.Get(s.Header)))
			if in, ok := req.Context().Value(injectedKey{}).(*injected); ok {
				in.add(s)
			}
		}
	}
	if clone != nil {
		req = clone
	}
	return t.next.RoundTrip(req)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

func hostList(l netguard.List) string {
	if len(l) == 0 {
		return " (this run has no network access)"
	}
	return " (granted: " + l.String() + ")"
}

// stripURLError drops the *url.Error wrapper, whose message repeats the method and URL.
func stripURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func validHeader(k, v string) bool {
	if k == "" || len(k) > 256 || len(v) > 8192 {
		return false
	}
	for _, r := range k {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r) {
			return false
		}
	}
	return !strings.ContainsAny(v, "\r\n\x00")
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
