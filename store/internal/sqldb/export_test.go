package sqldb

// ListRunsQuery is listRunsQuery, for the plan tests.
var ListRunsQuery = (*DB).listRunsQuery
