package sqldb

// ListRunsQuery is listRunsQuery, for the plan tests.
var ListRunsQuery = (*DB).listRunsQuery

// FindVersionsQuery is findVersionsQuery, for the plan tests.
var FindVersionsQuery = (*DB).findVersionsQuery

// The statements of PruneRuns and RunTenants, for the plan tests.
const (
	PruneOlder    = pruneOlder
	PruneLastKept = pruneLastKept
	PruneBeyond   = pruneBeyond
	RunTenants    = runTenants
)
