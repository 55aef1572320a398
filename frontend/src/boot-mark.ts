// Imported first by main.tsx, so this runs once every module of the entry has downloaded: the
// gap to 'cp:modules-evaluated' is the entry's evaluation, and bench/console.py --waterfall
// prints both beside the requests (issue 23: on slow 4G the wait after the download is CPU).
performance.mark('cp:modules-evaluating');
