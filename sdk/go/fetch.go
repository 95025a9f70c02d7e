package skill

import "encoding/json"

// Request is an outgoing HTTP request. The host checks it against the run's network
// grant before anything leaves the sandbox.
type Request struct {
	// Method is GET when empty; the host accepts GET HEAD POST PUT PATCH DELETE OPTIONS.
	Method string
	// URL is an absolute http or https URL without user info.
	URL string
	// Headers maps names to single values. Host, Content-Length, Transfer-Encoding,
	// Connection and the headers of granted secrets are set by the host only.
	Headers map[string]string
	// Body is the raw request body; nil or empty sends none.
	Body []byte
}

// Response is the answer to a Request. Any HTTP status is a Response, not an error:
// a 404 is information for the skill, while a refused or failed request is an *Error.
type Response struct {
	Status  int               // the HTTP status code
	URL     string            // the final URL, after redirects
	Headers map[string]string // lower-case names; repeated headers joined with ", "
	Body    []byte            // the raw body
}

// Text returns the body as a string.
func (r *Response) Text() string { return string(r.Body) }

// JSON decodes the body into v.
func (r *Response) JSON(v any) error { return json.Unmarshal(r.Body, v) }
