// The word lists behind the text metrics (connector_density, coref_pronouns, ops_numeric,
// ambiguity_flags, entities), English and Chinese. Each entry is written as it reads; it is matched
// as a sequence of tokens of the project's tokenize() (lower-cased words; every CJK character is a
// token of its own, so Chinese entries are matched character by character). Only Chinese entries of
// two or more characters are listed where a single character would also match inside other words.

/** Logical connectives (connector_density). */
export const CONNECTIVES_EN = [
  'and', 'but', 'or', 'nor', 'because', 'since', 'so', 'therefore', 'thus', 'hence', 'consequently',
  'accordingly', 'if', 'then', 'unless', 'although', 'though', 'however', 'while', 'whereas', 'whether',
  'moreover', 'furthermore', 'also', 'besides', 'otherwise', 'instead', 'meanwhile', 'after', 'before',
  'when', 'until', 'finally', 'as a result', 'in addition', 'so that', 'even though', 'even if',
  'as well as', 'in order to', 'due to', 'as long as', 'given that', 'provided that', 'rather than',
  'on the other hand', 'in contrast', 'as soon as',
];
export const CONNECTIVES_ZH = [
  '因为', '所以', '因此', '从而', '由于', '同时', '而且', '并且', '但是', '可是', '然而', '如果', '假如',
  '要是', '那么', '或者', '还是', '否则', '虽然', '尽管', '然后', '接着', '于是', '以及', '既然', '即使',
  '只要', '除非', '不过', '此外', '另外', '因而', '进而', '而是', '首先', '其次', '最后',
];

/** Pronouns and anaphoric demonstratives (coref_pronouns). */
export const PRONOUNS_EN = [
  'it', 'its', 'itself', 'they', 'them', 'their', 'theirs', 'themselves', 'he', 'him', 'his', 'himself',
  'she', 'her', 'hers', 'herself', 'this', 'that', 'these', 'those',
];
export const PRONOUNS_ZH = ['他', '她', '它', '其', '此', '该'];

/** Third-person personal pronouns: the ones that need an antecedent (ambiguity flag). */
export const THIRD_PERSON_EN = ['he', 'him', 'his', 'she', 'her', 'hers', 'it', 'its', 'they', 'them', 'their', 'theirs'];
export const THIRD_PERSON_ZH = ['他', '她', '它', '其'];

/** Words and phrases that ask for an arithmetic, comparison or date-difference operation (ops_numeric). */
export const OPERATION_CUES_EN = [
  // arithmetic
  'plus', 'minus', 'times', 'multiplied', 'multiply', 'divided', 'divide', 'sum', 'difference', 'product',
  'quotient', 'total', 'altogether', 'combined', 'twice', 'double', 'triple', 'half', 'percent',
  'percentage', 'average', 'ratio', 'remainder', 'squared', 'cubed',
  // comparison
  'more', 'less', 'fewer', 'most', 'least', 'greater', 'larger', 'smaller', 'bigger', 'older', 'younger',
  'longer', 'shorter', 'taller', 'higher', 'lower', 'earlier', 'later', 'faster', 'slower', 'heavier',
  'cheaper', 'oldest', 'youngest', 'largest', 'smallest', 'biggest', 'longest', 'tallest', 'highest',
  'came first', 'occurred first', 'happened first', 'founded first', 'released first', 'born first',
  // date and time differences
  'how many years', 'how many months', 'how many weeks', 'how many days', 'how many hours',
  'how many minutes', 'how long', 'how old', 'years apart', 'years between', 'years after',
  'years before', 'years later', 'years earlier', 'ago',
];
export const OPERATION_CUES_ZH = [
  '加上', '减去', '乘以', '除以', '总共', '一共', '合计', '总计', '平均', '百分之', '一半', '倍', '相差',
  '差值', '多于', '少于', '大于', '小于', '等于', '超过', '不足', '更多', '更少', '更大', '更小', '更早',
  '更晚', '更长', '最早', '最晚', '最大', '最小', '多久', '几年', '多少年', '多少天', '多少岁', '年龄',
];

/** Placeholders that leave the request under-specified. */
export const VAGUE_CUES_EN = ['something', 'somewhere', 'someone', 'somebody', 'a certain', 'some kind of', 'whatever'];
export const VAGUE_CUES_ZH = ['某个', '某些', '某人', '某种', '某地', '若干'];

/** Time references with no bound (open-time-range, unless the request names a year). */
export const OPEN_TIME_EN = [
  'current', 'currently', 'now', 'nowadays', 'today', 'recent', 'recently', 'lately', 'latest',
  'these days', 'so far', 'to date', 'up to now',
];
export const OPEN_TIME_ZH = ['目前', '现在', '最近', '近年', '如今', '至今', '当前', '迄今'];

/**
 * Common English words that start sentences (and template sentences) without naming anything:
 * function words, pronouns, question words, number words, interjections, frequent verbs (as
 * imperatives and -ing forms), adverbs and common nouns. A proper-noun span loses them at its start
 * (contractions reduced first: "I'm" → i, "Don't" → do), and a span made only of them is no entity.
 */
export const NOT_NAMES = new Set([
  // articles, pronouns, determiners, question words
  'a', 'an', 'the', 'i', 'he', 'she', 'it', 'we', 'they', 'you', 'me', 'him', 'us', 'them', 'his', 'her', 'its', 'our',
  'their', 'my', 'your', 'this', 'that', 'these', 'those', 'there', 'here', 'what', 'which', 'who', 'whom', 'whose',
  'when', 'where', 'why', 'how', 'whatever', 'whoever', 'someone', 'somebody', 'something', 'anyone', 'anything',
  'everyone', 'everything', 'nobody', 'nothing', 'each', 'every', 'all', 'some', 'any', 'no', 'none', 'both', 'either',
  'neither', 'many', 'much', 'most', 'more', 'few', 'several', 'other', 'another', 'such', 'same',
  // auxiliaries and their contracted stems (can't → ca, won't → wo)
  'is', 'are', 'was', 'were', 'be', 'been', 'being', 'am', 'do', 'does', 'did', 'can', 'could', 'would', 'should',
  'will', 'shall', 'may', 'might', 'must', 'has', 'have', 'had', 'ca', 'wo', 'let',
  // prepositions, conjunctions, adverbs
  'if', 'in', 'on', 'at', 'for', 'from', 'to', 'by', 'with', 'without', 'of', 'and', 'but', 'or', 'so', 'then', 'after',
  'before', 'as', 'since', 'because', 'while', 'also', 'however', 'therefore', 'thus', 'although', 'though', 'instead',
  'meanwhile', 'besides', 'during', 'over', 'under', 'about', 'until', 'unless', 'whether', 'between', 'among',
  'only', 'just', 'even', 'still', 'yet', 'already', 'currently', 'recently', 'now', 'today', 'tomorrow', 'yesterday',
  'later', 'finally', 'kindly', 'together', 'actually', 'basically', 'honestly', 'maybe', 'perhaps', 'otherwise',
  'including', 'according', 'based', 'considering', 'given', 'assuming', 'regarding', 'not', 'very', 'too', 'again',
  // number and order words
  'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'hundred',
  'thousand', 'million', 'half', 'first', 'second', 'third', 'last', 'next', 'number', 'numbers',
  // interjections and courtesy
  'yes', 'no', 'ok', 'okay', 'oh', 'oops', 'hi', 'hello', 'hey', 'dear', 'please', 'thanks', 'thank', 'sorry', 'great',
  'good', 'right', 'well', 'sure', 'quick', 'random', 'short', 'plain', 'bottom',
  // verbs an instruction or a question starts with
  'answer', 'ask', 'assume', 'be', 'break', 'calculate', 'check', 'compute', 'confirm', 'consider', 'determine',
  'explain', 'feel', 'figure', 'find', 'finish', 'flag', 'found', 'give', 'go', 'going', 'help', 'imagine', 'keep',
  'lay', 'lean', 'list', 'look', 'make', 'name', 'note', 'open', 'pick', 'picking', 'point', 'pull', 'put', 'read',
  'remember', 'research', 'run', 'say', 'search', 'see', 'show', 'skip', 'solve', 'start', 'state', 'suppose', 'take',
  'talk', 'tell', 'think', 'treat', 'try', 'use', 'verify', 'walk', 'want', 'work', 'write', 'answering', 'asking',
  'checking', 'looking', 'thinking', 'trying', 'typing', 'transcribing', 'working', 'writing', 'wondering',
  // common nouns that open a sentence
  'question', 'homework', 'myth', 'meaning', 'problem', 'example', 'step', 'steps',
  // days and months (dates, not entities)
  'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'january', 'february', 'march',
  'april', 'june', 'july', 'august', 'september', 'october', 'november', 'december',
]);

/** Lower-case words that may join capitalised words inside one name ("Battle of the Bulge", "Ludwig van Beethoven"). */
export const NAME_JOINERS = ['of', 'the', 'de', 'da', 'du', 'del', 'della', 'der', 'van', 'von', 'la', 'le', 'al', 'bin', 'y'];

/** The most common Chinese surnames: a surname + 0–2 characters + an honorific is a person's name. */
export const ZH_SURNAMES = '王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤';
export const ZH_HONORIFICS = ['先生', '女士', '小姐', '老师', '同学', '医生', '教授', '经理', '师傅', '阿姨', '叔叔'];
