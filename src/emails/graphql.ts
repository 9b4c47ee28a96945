// GraphQL of the e-mails (filled in with the settings and the log).
