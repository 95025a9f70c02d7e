// Package netguard holds the network checks a WebAssembly sandbox applies to
// its guests' outgoing HTTP.
//
// There are two independent layers, and a host needs both:
//
//   - Host patterns (Pattern, List) decide which names a guest may ask for:
//     "api.example.com", "*.example.com:8443". They are checked against the
//     URL, before anything is resolved, so a guest cannot even look up a name
//     it was not granted.
//
//   - Guard decides where a connection may actually go. A granted name can
//     still resolve to 127.0.0.1, to 169.254.169.254 or to a machine on the
//     operator's private network (by accident, by DNS rebinding, or by a
//     redirect to a literal address), so Guard checks the resolved address of
//     every connection at dial time, through net.Dialer.Control. Checking
//     after DNS, once per connection, is what makes rebinding and redirects
//     unable to bypass it.
//
// Classify is the address table both rely on; it is exported so that callers
// can explain refusals and so that tests can pin the table down.
package netguard
