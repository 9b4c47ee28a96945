// Loaded by autocannon's worker: a withdraw answer counts only if every item was accepted.
module.exports = (body) => body.startsWith('[') && body.includes('"success":true') && !body.includes('"success":false');
