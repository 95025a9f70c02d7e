package runtime

import (
	"fmt"
	"strings"
)

// PolicyError is a problem in the operator's policy file. Unlike a broken skill, a broken policy
// stops [New]: running with a policy other than the one the operator wrote would be unsafe.
type PolicyError struct {
	Path     string
	Problems []string
}

func (e *PolicyError) Error() string {
	return fmt.Sprintf("policy %s: %s", e.Path, strings.Join(e.Problems, "; "))
}
