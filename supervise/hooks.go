package supervise

// The seams an agent integration uses (cmd/lcwrap wires them to package
// agent): nothing here knows about agents.

// created adds CreatedDetails to the created event's details.
func (c *Config) created(d map[string]any) map[string]any {
	for k, v := range c.CreatedDetails {
		if _, ok := d[k]; !ok {
			d[k] = v
		}
	}
	return d
}

// started calls OnStarted, if set.
func (c *Config) started(pid int, startTime uint64) {
	if c.OnStarted != nil {
		c.OnStarted(pid, startTime)
	}
}

// beforeTerminal calls BeforeTerminal, if set, with the terminal event's
// details so far and adds what it returns (never replacing a key lcwrap
// set: the claim and the exit stay lcwrap's).
func (c *Config) beforeTerminal(d map[string]any) map[string]any {
	if c.BeforeTerminal == nil {
		return d
	}
	for k, v := range c.BeforeTerminal(d) {
		if _, ok := d[k]; !ok {
			d[k] = v
		}
	}
	return d
}

// recorded is the command the created event records: RecordedArgv when
// an integration added to Argv (it says what it added), else Argv.
func (c *Config) recorded() []string {
	if c.RecordedArgv != nil {
		return c.RecordedArgv
	}
	return c.Argv
}
