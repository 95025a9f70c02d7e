package skillboxtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"sort"
	"strings"

	skill "github.com/skillbox-dev/skillbox/sdk/go"
)

// Responder answers a fetch the skill makes. A returned *skill.Error reaches the skill
// with its Status and Message (to script a refusal or a failure); any other error is a
// FAILED fetch carrying its text, as a connection the host could not make.
type Responder func(req skill.Request) (*skill.Response, error)

// Route answers every fetch of method (GET when empty) and exactly url (query included)
// with r. The hosts of the routes are the run's network grant: a fetch to any other host
// is denied, as a host off the manifest's permissions.network would be.
func Route(method, url string, r Responder) Option {
	return func(h *Host) { h.routes[routeKey(method, url)] = r }
}

// FetchFunc answers every fetch that no Route matches, so a test can serve a whole
// API from one function. With a FetchFunc every host is on the grant.
func FetchFunc(r Responder) Option {
	return func(h *Host) { h.fallback = r }
}

// Text answers with status and body as text/plain.
func Text(status int, body string) Responder {
	return func(skill.Request) (*skill.Response, error) {
		return &skill.Response{Status: status, Headers: map[string]string{"content-type": "text/plain; charset=utf-8"}, Body: []byte(body)}, nil
	}
}

// JSON answers with status and v encoded as application/json. A v that does not encode
// fails the fetch with the encoding error.
func JSON(status int, v any) Responder {
	body, err := json.Marshal(v)
	return func(skill.Request) (*skill.Response, error) {
		if err != nil {
			return nil, err
		}
		return &skill.Response{Status: status, Headers: map[string]string{"content-type": "application/json"}, Body: body}, nil
	}
}

// Fail answers with a host refusal or failure: Fail(skill.Failed, "connection refused")
// is what the skill sees for a server that is down.
func Fail(status skill.Status, message string) Responder {
	return func(skill.Request) (*skill.Response, error) {
		return nil, &skill.Error{Op: "fetch", Status: status, Message: message}
	}
}

func routeKey(method, url string) string {
	method = strings.ToUpper(method)
	if method == "" {
		method = "GET"
	}
	return method + " " + url
}

var fetchMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// Headers only the host sets.
var reservedHeaders = map[string]bool{"host": true, "content-length": true, "transfer-encoding": true,
	"connection": true, "upgrade": true, "te": true, "trailer": true, "keep-alive": true}

// fetch answers skillbox_fetch in the host's order: a malformed request is INVALID, a host
// off the grant DENIED, past the fetch count LIMIT; only then does a responder answer.
func (h *Host) fetch(head, body []byte) (*skill.Response, *refusal) {
	var wreq struct {
		Method  string            `json:"method"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&wreq); err != nil {
		return nil, refuse(skill.Invalid, "the request is not valid JSON: %v", err)
	}
	req := skill.Request{Method: strings.ToUpper(wreq.Method), URL: wreq.URL, Headers: wreq.Headers, Body: body}
	if req.Method == "" {
		req.Method = "GET"
	}
	h.mu.Lock()
	h.requests = append(h.requests, req)
	r, bad := h.admit(req)
	h.mu.Unlock()
	if bad != nil {
		return nil, bad
	}
	resp, err := r(req)
	if err != nil {
		var se *skill.Error
		if errors.As(err, &se) && se.Status != skill.OK {
			return nil, &refusal{status: se.Status, msg: se.Message}
		}
		return nil, refuse(skill.Failed, "%s: %v", req.URL, err)
	}
	return h.finish(req, resp)
}

// admit checks req as the host does and returns the responder that answers it. The caller
// holds h.mu.
func (h *Host) admit(req skill.Request) (Responder, *refusal) {
	if int64(len(req.Body)) > h.limits.MaxFetchBytes {
		return nil, refuse(skill.Invalid, "fetch: a request body of %d bytes is more than maxFetchBytes (%d)", len(req.Body), h.limits.MaxFetchBytes)
	}
	if !contains(fetchMethods, req.Method) {
		return nil, refuse(skill.Invalid, "method %q is not one of %s", req.Method, strings.Join(fetchMethods, " "))
	}
	u, err := url.Parse(req.URL)
	switch {
	case err != nil:
		return nil, refuse(skill.Invalid, "bad URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, refuse(skill.Invalid, "%s: only http and https URLs are allowed", req.URL)
	case u.User != nil:
		return nil, refuse(skill.Invalid, "URLs with user info are not allowed; use a header")
	case u.Hostname() == "":
		return nil, refuse(skill.Invalid, "%s: the URL has no host", req.URL)
	}
	r := h.routes[routeKey(req.Method, req.URL)]
	if r == nil {
		r = h.fallback
	}
	if r == nil {
		granted := h.grantedHosts()
		if !contains(granted, u.Host) {
			what := u.Redacted() + ": host " + u.Host + " is not on the grant"
			h.deny("fetch " + what)
			list := " (this run has no network access)"
			if len(granted) > 0 {
				list = " (granted: " + strings.Join(granted, ", ") + ")"
			}
			return nil, refuse(skill.Denied, "%s%s", what, list)
		}
		// The host is granted but the test scripted no answer: the real host would have
		// made the request; the fake can only say what is missing.
		return nil, refuse(skill.Failed, "%s: no answer scripted for %s %s (add a skillboxtest.Route)", u.Redacted(), req.Method, req.URL)
	}
	for k := range req.Headers {
		if lk := strings.ToLower(k); reservedHeaders[lk] || strings.HasPrefix(lk, "proxy-") {
			return nil, refuse(skill.Invalid, "header %q is set by the host, not the skill", k)
		}
	}
	if h.fetches >= h.limits.MaxFetches {
		return nil, refuse(skill.Limit, "the run's maxFetches (%d) is used up", h.limits.MaxFetches)
	}
	h.fetches++
	return r, nil
}

// finish fills in what the host always sets on a response and applies the size limit.
func (h *Host) finish(req skill.Request, resp *skill.Response) (*skill.Response, *refusal) {
	if resp == nil {
		return nil, refuse(skill.Failed, "%s: the responder returned no response", req.URL)
	}
	out := *resp
	if out.Status == 0 {
		out.Status = 200
	}
	if out.URL == "" {
		out.URL = req.URL
	}
	out.Headers = make(map[string]string, len(resp.Headers))
	for k, v := range resp.Headers {
		out.Headers[strings.ToLower(k)] = v
	}
	if req.Method == "HEAD" {
		out.Body = nil // a HEAD response has no body, whatever its responder wrote
	}
	if int64(len(out.Body)) > h.limits.MaxFetchBytes {
		return nil, refuse(skill.Limit, "%s: response is more than maxFetchBytes (%d)", req.URL, h.limits.MaxFetchBytes)
	}
	return &out, nil
}

// grantedHosts returns the host[:port] of every route, sorted: the fake's network grant.
func (h *Host) grantedHosts() []string {
	var hosts []string
	for key := range h.routes {
		if u, err := url.Parse(key[strings.IndexByte(key, ' ')+1:]); err == nil && !contains(hosts, u.Host) {
			hosts = append(hosts, u.Host)
		}
	}
	sort.Strings(hosts)
	return hosts
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
