// A sandbox transfer counts only if it was applied as final. Error bodies fail this too, so
// responses - mismatches is exactly the number of confirmed transfers.
module.exports = (body) => body.includes('"state":"confirmed"');
