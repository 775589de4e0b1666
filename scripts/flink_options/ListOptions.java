import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.annotation.Annotation;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Lists every Flink ConfigOption declared as a static field of a class in the given jars.
 *
 * <p>Used by scripts/update_flink_keys.py (which says how to run it). Classes are found by their
 * bytes naming org/apache/flink/configuration/ConfigOption, loaded without running anything but
 * their static initialisers, and read by reflection only, so one program reads every Flink
 * release whatever its API. One line per key, tab-separated:
 *
 * <pre>key  role  class  type</pre>
 *
 * role: "key" (the option's key), "fallback" or "deprecated" (a fallback key Flink still reads,
 * and whether Flink calls it deprecated); type: the option's value class, "list:" before it for a
 * list option. A field annotated @Documentation.SuffixOption("prefix") has the key "prefix.key", as
 * Flink's documentation writes it (metrics.reporter.&lt;name&gt;.factory.class).
 */
public final class ListOptions {
    private static final byte[] MARK =
            "org/apache/flink/configuration/ConfigOption".getBytes(StandardCharsets.US_ASCII);

    public static void main(String[] args) throws Exception {
        List<File> jars = new ArrayList<>();
        for (String arg : args) {
            jars.add(new File(arg));
        }
        URL[] urls = new URL[jars.size()];
        for (int i = 0; i < urls.length; i++) {
            urls[i] = jars.get(i).toURI().toURL();
        }
        PrintStream realErr = System.err;
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        // static initialisers may log: keep their noise off our stdout
        System.setOut(new PrintStream(new ByteArrayOutputStream()));
        System.setErr(new PrintStream(new ByteArrayOutputStream()));
        TreeSet<String> lines = new TreeSet<>();
        int failed = 0;
        try (URLClassLoader loader = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader())) {
            Class<?> optionClass = Class.forName("org.apache.flink.configuration.ConfigOption", false, loader);
            for (File jar : jars) {
                for (String name : candidates(jar)) {
                    try {
                        Class<?> c = Class.forName(name, false, loader);
                        for (Field f : c.getDeclaredFields()) {
                            if (!Modifier.isStatic(f.getModifiers()) || !optionClass.isAssignableFrom(f.getType())) {
                                continue;
                            }
                            f.setAccessible(true);
                            Object option = f.get(null);
                            if (option != null) {
                                describe(option, f, c.getName(), lines);
                            }
                        }
                    } catch (Throwable t) {
                        failed++;
                        realErr.println("skipped " + name + ": " + t);
                    }
                }
            }
        }
        for (String line : lines) {
            out.println(line);
        }
        out.flush();
        realErr.println("classes skipped: " + failed);
    }

    private static List<String> candidates(File jar) throws Exception {
        List<String> names = new ArrayList<>();
        try (JarFile file = new JarFile(jar)) {
            Enumeration<JarEntry> entries = file.entries();
            while (entries.hasMoreElements()) {
                JarEntry e = entries.nextElement();
                String n = e.getName();
                if (!n.endsWith(".class") || !n.startsWith("org/apache/flink/") || n.contains("/shaded/")) {
                    continue;
                }
                byte[] bytes;
                try (InputStream in = file.getInputStream(e)) {
                    bytes = in.readAllBytes();
                }
                if (contains(bytes, MARK)) {
                    names.add(n.substring(0, n.length() - 6).replace('/', '.'));
                }
            }
        }
        return names;
    }

    private static boolean contains(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    private static void describe(Object option, Field field, String owner, TreeSet<String> lines) throws Exception {
        String key = (String) call(option, "key");
        String prefix = suffixPrefix(field);
        String type = type(option);
        lines.add(String.join("\t", prefixed(prefix, key), "key", owner, type));
        Object fallbacks = call(option, "fallbackKeys");
        if (fallbacks instanceof Iterable) {
            for (Object fb : (Iterable<?>) fallbacks) {
                String fbKey = (String) call(fb, "getKey");
                boolean deprecated = Boolean.TRUE.equals(call(fb, "isDeprecated"));
                lines.add(String.join("\t", prefixed(prefix, fbKey), deprecated ? "deprecated" : "fallback", owner, type));
            }
        }
    }

    private static String prefixed(String prefix, String key) {
        return prefix == null ? key : prefix + "." + key;
    }

    private static String suffixPrefix(Field field) throws Exception {
        for (Annotation a : field.getAnnotations()) {
            if (a.annotationType().getName().endsWith("Documentation$SuffixOption")) {
                return (String) a.annotationType().getMethod("value").invoke(a);
            }
        }
        return null;
    }

    private static String type(Object option) {
        try {
            Object clazz = call(option, "getClazz");
            Object list = call(option, "isList");
            String name = clazz instanceof Class ? ((Class<?>) clazz).getSimpleName() : "?";
            return Boolean.TRUE.equals(list) ? "list:" + name : name;
        } catch (Exception e) {
            return "?";
        }
    }

    private static Object call(Object target, String method) throws Exception {
        Class<?> c = target.getClass();
        while (c != null) {
            try {
                Method m = c.getDeclaredMethod(method);
                m.setAccessible(true);
                return m.invoke(target);
            } catch (NoSuchMethodException e) {
                c = c.getSuperclass();
            }
        }
        throw new NoSuchMethodException(method);
    }

    private ListOptions() {}
}
