#!/usr/bin/perl
# t8n-server.pl - serve cbqs-t8n-server/v1 (docs/fixtures.md §4.1) over a per-call t8n.
# Written by an outside reader from README.md and docs/fixtures.md §0, §4-§4.2 alone (no source
# read), as a node team would: test/consume/targets.test.ts runs consume and fuzz through it.
#
#   perl t8n-server.pl '<per-call t8n command>'      (requests on stdin, answers on stdout)
#
# One run of the command per `apply` / `session.apply`, exactly as the cbqs tools run a per-call
# t8n (§4): /bin/sh -c '<command> "$@"' cbqs-fuzz --input.alloc <d>/alloc.json ... --output.alloc
# <d>/post.json, stdin /dev/null, stdout discarded, stderr kept (its last line goes into the
# t8n_failed message), in a process group of its own, with a 600 s deadline. A session keeps its
# state as a file in our private temporary directory, so "session_state_root" is "per_block".
# The directory is removed on EOF and on SIGTERM/SIGINT (a command under way is killed first).
#
# Deliberately left out (the command then fails: t8n_failed where `cbqs t8n --server` says
# invalid_request or parse_error):
#  - duplicate keys, lone surrogate escapes and "-0": JSON::PP does not report them. (Invalid
#    UTF-8, a byte-order mark, nesting deeper than 64, floats, negative numbers and integers above
#    2^53 - 1 are refused as parse_error.)
#  - the content of the documents beyond their shape: alloc entries are only checked to be objects
#    with a 54-byte hex `key`; env values to be decimal / 0x-hex strings (no range, no canonical
#    form); txs to be even-length 0x-hex strings. Unknown members of alloc and its entries are not
#    refused: the document's member list is in docs/state.md §5, not in the protocol document.
#  - options: max_line_bytes is fixed at 64 MiB, the command's deadline at 600 s.
use strict;
use warnings;
use B (); use Encode (); use File::Copy (); use File::Path (); use File::Temp (); use JSON::PP (); use POSIX ();

my $CMD = shift;
die "usage: $0 '<per-call t8n command>'\n" if !defined $CMD || @ARGV;
my ($MAX_LINE, $MAX_SESSIONS, $DEADLINE, $MAX_OUT) = (64 << 20, 16, 600, 256 << 20);
my $IN = JSON::PP->new->allow_nonref->allow_bignum->max_depth(64);   # requests, decoded from UTF-8 first
my $OUT = JSON::PP->new->utf8->allow_nonref;                           # compact: answers and input files
my $FILE = JSON::PP->new->utf8->allow_nonref->max_depth(4096);         # the command's output files
my %METHODS = (    # method => [required members], [optional members]
    'apply'         => [ [qw(alloc txs env)], ['want_post_state'] ],   'session.open'       => [ ['alloc'], [] ],
    'session.apply' => [ [qw(session txs env)], [] ],                  'session.post_state' => [ ['session'], [] ],
    'session.close' => [ ['session'], [] ],
);
my %TYPE = (alloc => [ HASH => 'an object' ], env => [ HASH => 'an object' ], txs => [ ARRAY => 'an array' ],
            session => [ '' => 'a string' ], want_post_state => [ 'JSON::PP::Boolean' => 'a boolean' ]);
my %ENV_FIELDS = (height => 'dec', timestamp => 'dec', chain_id => 'dec', cycle_price => 'dec',
                  cell_price => 'dec', chain_instance_id => 32, governance => 20, parent_hash => 32);

my $owner = $$;
my $dir = File::Temp::tempdir('small-t8n-XXXXXXXX', TMPDIR => 1);
my ($child, $stop, $reading, $timed_out, $answered, $calls, $opened) = (0, '', 0, 0, 0, 0, 0);
my %sessions;    # name => { file => its state dump, height => decimal string }
END { File::Path::remove_tree($dir) if $$ == $owner && defined $dir && -d $dir }
sub finish {
    print STDERR "cbqs: stopped by $stop; $answered requests answered, none left half-done\n" if $stop;
    exit($stop eq 'SIGINT' ? 130 : $stop ? 143 : 0);
}
for my $sig (qw(INT TERM)) {    # idle: stop now; busy: end the command, answer, then stop
    $SIG{$sig} = sub { $stop ||= "SIG$sig"; kill 'KILL', -$child if $child; finish() if $reading };
}
$SIG{ALRM} = sub { $timed_out = 1; kill 'KILL', -$child if $child };
$SIG{PIPE} = 'IGNORE';

sub fail { die { code => $_[0], message => $_[1] } }
sub cut { my $s = "$_[0]" =~ s/[\r\n]+/ /gr; length $s > 200 ? substr($s, 0, 200) . '... (' . length($s) . ' characters)' : $s }
sub is_num { my $f = B::svref_2object(\$_[0])->FLAGS; ($f & (B::SVp_IOK | B::SVp_NOK)) && !($f & B::SVp_POK) }
sub is_str { defined $_[0] && !ref $_[0] && !is_num($_[0]) }
sub dec_gt {    # decimal strings: $x > $y
    my ($x, $y) = map { s/^0+(?=.)//r } @_;
    length $x != length $y ? length $x > length $y : $x gt $y;
}

# Request lines, read in 1 MiB chunks; a line longer than $MAX_LINE is dropped up to its LF.
my ($buf, $scan, $eof, $drop) = ('', 0, 0, 0);
sub read_line {    # undef at EOF; \undef for a line that is too long; else \$line
    while (1) {
        my $i = index($buf, "\n", $scan);
        if ($i >= 0 || ($eof && ($buf ne '' || $drop))) {    # a last line without LF counts
            my $line = substr($buf, 0, $i >= 0 ? $i + 1 : length $buf, '') =~ s/\n\z//r;
            my $long = $drop || length $line > $MAX_LINE;
            ($scan, $drop) = (0, 0);
            return $long ? \undef : \$line;
        }
        return undef if $eof;
        ($buf, $drop) = ('', 1) if $drop || length $buf > $MAX_LINE;
        $scan = length $buf;
        $reading = 1;
        finish() if $stop;
        my $n = sysread(STDIN, $buf, 1 << 20, length $buf);
        $reading = 0;
        $eof = 1 if defined $n ? $n == 0 : !$!{EINTR};
    }
}

sub parse {    # UTF-8, no BOM, depth <= 64 (JSON::PP), numbers only unsigned integers < 2^53
    my $text = eval { Encode::decode('UTF-8', $_[0], Encode::FB_CROAK | Encode::LEAVE_SRC) };
    fail('parse_error', '$: not valid UTF-8') if !defined $text;
    fail('parse_error', '$: a byte-order mark') if $text =~ /^\x{FEFF}/;
    my $v;
    eval { $v = $IN->decode($text); 1 } or fail('parse_error', '$: not valid JSON: ' . cut($@ =~ s/ at \S+ line \d+\.\s*$//r));
    my @todo = ([ $v, '$' ]);
    while (my $t = pop @todo) {
        my ($x, $path) = @$t;
        if (ref $x eq 'HASH') { push @todo, map { [ $x->{$_}, "$path.$_" ] } keys %$x }
        elsif (ref $x eq 'ARRAY') { push @todo, map { [ $x->[$_], "$path\[$_]" ] } 0 .. $#$x }
        elsif (ref($x) =~ /^Math::Big/ || (is_num($x) && ($x < 0 || $x > 2**53 - 1))) {
            fail('parse_error', cut($path) . ': numbers are unsigned integers up to 2^53 - 1');
        }
    }
    return $v;
}

sub check_alloc {
    my ($a, $for_session) = @_;
    fail('invalid_request', '$.alloc.format: expected "cbqs-state-dump/v1"') if !is_str($a->{format}) || $a->{format} ne 'cbqs-state-dump/v1';
    fail('invalid_request', '$.alloc.height: required for a session (the height of the block this state is after)') if $for_session && !exists $a->{height};
    fail('invalid_request', '$.alloc.height: expected a decimal string') if exists $a->{height} && !(is_str($a->{height}) && $a->{height} =~ /^[0-9]+\z/);
    fail('invalid_request', '$.alloc.entries: expected an array') if ref $a->{entries} ne 'ARRAY';
    for my $i (0 .. $#{ $a->{entries} }) {
        my $e = $a->{entries}[$i];
        fail('invalid_request', "\$.alloc.entries[$i]: expected an object") if ref $e ne 'HASH';
        fail('invalid_request', "\$.alloc.entries[$i].key: expected 0x and 54 bytes of hex") if !is_str($e->{key}) || $e->{key} !~ /^0x[0-9a-fA-F]{108}\z/;
    }
}
sub check_env {
    my ($env) = @_;
    for (sort keys %$env) { fail('invalid_request', '$.env.' . cut($_) . ': unknown member') if !$ENV_FIELDS{$_} }
    for (qw(height timestamp chain_id chain_instance_id governance)) { fail('invalid_request', "\$.env.$_: missing") if !exists $env->{$_} }
    for my $k (sort keys %$env) {
        my ($v, $t) = ($env->{$k}, $ENV_FIELDS{$k});
        fail('invalid_request', "\$.env.$k: expected a decimal string") if $t eq 'dec' && !(is_str($v) && $v =~ /^[0-9]+\z/);
        fail('invalid_request', "\$.env.$k: expected 0x and $t bytes of hex") if $t ne 'dec' && !(is_str($v) && $v =~ /^0x[0-9a-fA-F]{${\($t * 2)}}\z/);
    }
    fail('invalid_request', '$.env.height: must be at least 1') if $env->{height} =~ /^0+\z/;
}
sub check_txs {
    my ($txs) = @_;
    fail('invalid_request', '$.txs: more than 65536 transactions') if @$txs > 65536;
    !is_str($txs->[$_]) || $txs->[$_] !~ /^0x(?:[0-9a-fA-F]{2})*\z/ and fail('invalid_request', "\$.txs[$_]: expected 0x and hex bytes") for 0 .. $#$txs;
}

sub write_json { open my $fh, '>', $_[0] or die "$_[0]: $!\n"; print $fh $OUT->encode($_[1]) or die "$_[0]: $!\n"; close $fh or die "$_[0]: $!\n" }
sub read_json {    # an output file: a regular file of at most 256 MiB holding a document of $format
    my ($file, $flag, $format) = @_;
    return "$flag is a " . (-d _ ? 'directory' : -p _ ? 'FIFO' : 'special file') . ', not a regular file' if !-f $file;
    return "$flag has " . (-s _) . " bytes, above the $MAX_OUT-byte bound" if -s _ > $MAX_OUT;
    open my $fh, '<:raw', $file or return "$flag: cannot read: $!";
    my $v = eval { $FILE->decode(do { local $/; <$fh> }) };
    return "$flag is not JSON: " . cut($@ =~ s/ at \S+ line \d+\.\s*$//r) if !defined $v;
    return "$flag is not a $format document" if ref $v ne 'HASH' || ($v->{format} // '') ne $format;
    return $v;
}

sub run_t8n {    # one run in the fresh directory $d: (result, post-state, post.json) or t8n_failed
    my ($alloc, $txs, $env, $d) = @_;
    mkdir $d or die "mkdir $d: $!\n";
    ref $alloc ? write_json("$d/alloc.json", $alloc) : File::Copy::copy($alloc, "$d/alloc.json") || die "copy: $!\n";
    write_json("$d/txs.json", $txs), write_json("$d/env.json", $env);
    my @args = map { ("--$_->[0]", "$d/$_->[1]") } [ 'input.alloc', 'alloc.json' ], [ 'input.txs', 'txs.json' ],
        [ 'input.env', 'env.json' ], [ 'output.result', 'result.json' ], [ 'output.alloc', 'post.json' ];
    my $pid = fork // die "fork: $!\n";
    if (!$pid) {
        POSIX::setpgid(0, 0);
        $SIG{PIPE} = 'DEFAULT';
        open STDIN, '<', '/dev/null'; open STDOUT, '>', '/dev/null'; open STDERR, '>', "$d.stderr";
        exec { '/bin/sh' } '/bin/sh', '-c', "$CMD \"\$@\"", 'cbqs-fuzz', @args or POSIX::_exit(127);
    }
    POSIX::setpgid($pid, $pid);
    ($child, $timed_out) = ($pid, 0);
    kill 'KILL', -$pid if $stop;
    alarm $DEADLINE; waitpid($pid, 0); my $status = $?; alarm 0; $child = 0;
    kill 'KILL', -$pid;    # whatever it left running in its group
    my $why = $stop ? "stopped by $stop" : $timed_out ? "took longer than $DEADLINE s" : undef;
    if (!$why && (!-e "$d/result.json" || !-e "$d/post.json")) {    # only now is the exit status read
        my $code = $status >> 8;
        my $how = $status & 127 ? 'killed by signal ' . ($status & 127) : "exit $code" . ($code == 127 ? ' (command not found)' : '');
        $why = "$how, without writing " . (-e "$d/result.json" ? '--output.alloc' : '--output.result');
    }
    my ($result, $post);
    $why //= ref($result = read_json("$d/result.json", '--output.result', 'cbqs-t8n-result/v1')) ? undef : $result;
    $why //= ref($post = read_json("$d/post.json", '--output.alloc', 'cbqs-state-dump/v1')) ? undef : $post;
    return ($result, $post, "$d/post.json") if !$why;
    my $last = '';
    if (open my $fh, '<:raw', "$d.stderr") {
        seek $fh, -65536, 2 if -s $fh > 65536;
        $last = (grep { /\S/ } split /\n/, do { local $/; <$fh> })[-1] // '';
    }
    fail('t8n_failed', "per-call t8n: $why" . ($last ne '' ? '; stderr: ' . cut($last) : ''));
}

sub handle {    # one request line (undef: too long) -> (id, answer body)
    my ($line) = @_;
    my $id;    # null until the request's id is known
    my $body = eval {
        fail('line_too_long', "the line is longer than $MAX_LINE bytes") if !defined $line;
        my $req = parse($line);
        fail('invalid_request', '$: not an object') if ref $req ne 'HASH';
        my ($rid, $m) = @$req{qw(id method)};
        fail('invalid_request', '$.id: missing') if !exists $req->{id};
        fail('invalid_request', '$.id: expected a string of at most 200 characters or an unsigned integer')
            if ref $rid || !defined $rid || (!is_num($rid) && length $rid > 200);
        $id = is_num($rid) ? 0 + $rid : $rid;
        fail('invalid_request', '$.method: missing') if !exists $req->{method};
        fail('invalid_request', '$.method: expected a string') if !is_str($m);
        fail('unknown_method', 'unknown method "' . cut($m) . '" (expected one of: apply, session.open, session.apply, session.post_state, session.close)') if !$METHODS{$m};
        my ($required, $optional) = @{ $METHODS{$m} };
        my %known = map { $_ => 1 } 'id', 'method', @$required, @$optional;
        for (sort keys %$req) { fail('invalid_request', '$.' . cut($_) . ': unknown member') if !$known{$_} }
        for (@$required) { fail('invalid_request', "\$.$_: missing") if !exists $req->{$_} }
        for (grep { exists $req->{$_} } @$required, @$optional) {
            my ($ref, $what) = @{ $TYPE{$_} };
            fail('invalid_request', "\$.$_: expected $what") if $ref ? ref $req->{$_} ne $ref : !is_str($req->{$_});
        }
        my $s = exists $req->{session} && ($sessions{ $req->{session} } || fail('unknown_session', 'no open session "' . cut($req->{session}) . '"'));
        check_alloc($req->{alloc}, $m eq 'session.open') if exists $req->{alloc};
        check_env($req->{env}) if exists $req->{env};
        check_txs($req->{txs}) if exists $req->{txs};
        fail('invalid_request', "\$.env.height: $req->{env}{height} is not above the session's height $s->{height}")
            if $m eq 'session.apply' && !dec_gt($req->{env}{height}, $s->{height});
        fail('too_many_sessions', "$MAX_SESSIONS sessions are open") if $m eq 'session.open' && keys %sessions >= $MAX_SESSIONS;

        my $d = "$dir/call" . ++$calls;
        my $answer = eval {
            if ($m eq 'apply') {
                my ($result, $post) = run_t8n($req->{alloc}, $req->{txs}, $req->{env}, $d);
                return { result => $result, $req->{want_post_state} ? (post_state => $post) : () };
            } elsif ($m eq 'session.open') {    # runs nothing: the alloc is the session's state
                my $name = 's' . ++$opened;
                write_json("$dir/$name.json", $req->{alloc});
                $sessions{$name} = { file => "$dir/$name.json", height => $req->{alloc}{height} };
                return { session => $name, height => $req->{alloc}{height} };
            } elsif ($m eq 'session.apply') {   # a failure leaves the session as it was
                my ($result, undef, $post_file) = run_t8n($s->{file}, $req->{txs}, $req->{env}, $d);
                rename $post_file, $s->{file} or die "rename: $!\n";
                $s->{height} = $req->{env}{height};
                return { result => $result };
            } elsif ($m eq 'session.post_state') {
                my $post = read_json($s->{file}, 'the session state', 'cbqs-state-dump/v1');
                return ref $post ? { post_state => $post } : die "$post\n";
            }
            delete $sessions{ $req->{session} };
            unlink $s->{file};
            return { closed => $req->{session} };
        };
        my $err = $@;
        File::Path::remove_tree($d, "$d.stderr");
        $answer // die $err;
    };
    return ($id, $body) if $body;
    return ($id, { error => ref $@ eq 'HASH' ? $@ : { code => 'internal_error', message => cut($@) } });
}

binmode STDOUT; $| = 1;
sub write_line { print STDOUT $_[0], "\n" or do { print STDERR "small-t8n-server: cannot write stdout: $!\n"; exit 1 } }
write_line($OUT->encode({ protocol => 'cbqs-t8n-server/v1', implementation => 'small-t8n-server.pl 1 (per-call t8n)',
    max_line_bytes => $MAX_LINE, max_sessions => $MAX_SESSIONS, session_state_root => 'per_block' }));
while (defined(my $ref = read_line())) {
    next if defined $$ref && $$ref =~ /^[ \t\r]*\z/;    # blank lines are skipped
    my ($id, $body) = handle($$ref);
    write_line('{"id":' . $OUT->encode($id) . ',' . substr($OUT->encode($body), 1));    # id first
    $answered++;
    finish() if $stop;
}
finish();
