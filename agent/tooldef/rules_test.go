package tooldef

import "testing"

// TestVendorRulesAreDocumented: every rule says whose it is, what it asks, where it is written
// and which lists it keeps a tool out of, and checks either a tool or a whole request.
func TestVendorRulesAreDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range VendorRules() {
		key := string(r.Vendor) + "/" + r.ID
		if seen[key] || r.Vendor == "" || r.ID == "" || r.Text == "" || r.Source == "" || len(r.Formats) == 0 || (r.tool == nil) == (r.list == nil) || r.Request != (r.list != nil) {
			t.Errorf("rule %s: %+v", key, r)
		}
		seen[key] = true
	}
}
