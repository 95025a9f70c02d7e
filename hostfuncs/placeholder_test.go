package hostfuncs

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// env of a secret's name answers a placeholder, the same within a run and another in the next,
// never the secret; a name that is a variable too answers the variable.
func TestEnvOfASecretIsAPlaceholder(t *testing.T) {
	t.Parallel()
	g := &Grant{Env: map[string]string{"BOTH": "plain"}, Secrets: []Secret{
		{Name: "API_KEY", Header: "Authorization", Value: "Bearer s3cret", Raw: "s3cret"},
		{Name: "BOTH", Header: "X-Both", Value: "b", Raw: "b"},
	}}
	a, b := NewCall(g), NewCall(g)
	p1, err1 := a.Env(context.Background(), "API_KEY")
	p2, _ := a.Env(context.Background(), "API_KEY")
	p3, _ := b.Env(context.Background(), "API_KEY")
	if err1 != nil || !strings.HasPrefix(p1, placeholderPrefix) || p1 != p2 || p1 == p3 || strings.Contains(p1, "s3cret") {
		t.Errorf("placeholders %q %q (another run %q), %v", p1, p2, p3, err1)
	}
	if v, err := a.Env(context.Background(), "BOTH"); v != "plain" || err != nil {
		t.Errorf("a variable of a secret's name: %q, %v", v, err)
	}
}

// fetch fills a placeholder in with the secret only in that secret's header, on a request to its
// hosts over https; anywhere else the placeholder goes as it is. A value of the secret's header
// without this run's placeholder is still refused.
func TestFetchFillsInAPlaceholderOnlyWhereTheSecretGoes(t *testing.T) {
	t.Parallel()
	seen := make(chan string, 8)
	record := func(scheme string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			seen <- scheme + " " + r.Header.Get("Authorization") + " | " + r.Header.Get("X-Other") + " | " + r.URL.RawQuery
		}
	}
	tlsSrv := httptest.NewTLSServer(record("https"))
	defer tlsSrv.Close()
	tlsOther := httptest.NewTLSServer(record("https"))
	defer tlsOther.Close()
	plain := httptest.NewServer(record("http"))
	defer plain.Close()
	pool := x509.NewCertPool()
	pool.AddCert(tlsSrv.Certificate())
	c := loopbackCall(t, "127.0.0.1", "localhost")
	c.Grant.RootCAs = pool
	c.Grant.Secrets = []Secret{{Name: "API_KEY", Hosts: grantList(t, strings.TrimPrefix(tlsSrv.URL, "https://")), Header: "Authorization", Value: "Bearer s3cret", Raw: "s3cret"}}
	p, err := c.Env(context.Background(), "API_KEY")
	if err != nil {
		t.Fatal(err)
	}
	headers := map[string]string{"Authorization": "Token " + p, "X-Other": p}
	fetchOK(t, c.fetch(context.Background(), request("GET", tlsSrv.URL+"/?k="+p, headers), nil))
	if got, want := <-seen, "https Token s3cret | "+p+" | k="+p; got != want {
		t.Errorf("to the secret's host:\n got %q\nwant %q", got, want)
	}
	// Plain http, and https to a host that is not the secret's (another port): the placeholder
	// as it is.
	fetchOK(t, c.fetch(context.Background(), request("GET", plain.URL+"/", headers), nil))
	if got, want := <-seen, "http Token "+p+" | "+p+" | "; got != want {
		t.Errorf("over plain http:\n got %q\nwant %q", got, want)
	}
	fetchOK(t, c.fetch(context.Background(), request("GET", tlsOther.URL+"/", headers), nil))
	if got, want := <-seen, "https Token "+p+" | "+p+" | "; got != want {
		t.Errorf("to another host:\n got %q\nwant %q", got, want)
	}
	for _, v := range []string{"Bearer forged", "Bearer " + placeholderPrefix + "00000000000000000000000000000000"} {
		wantReply(t, c.fetch(context.Background(), request("GET", tlsSrv.URL+"/", map[string]string{"Authorization": v}), nil), StatusInvalid, "carries the secret API_KEY")
	}
	if len(seen) != 0 {
		t.Errorf("a refused request reached a server: %q", <-seen)
	}
}
