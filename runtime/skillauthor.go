package runtime

// AgentWritten reports whether an agent wrote s (through create_skill or update_skill).
func (s *Skill) AgentWritten() bool { return s.agent }
